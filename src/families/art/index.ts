import { ART_FAMILY, artTaskProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { artCatalog } from './catalog.js';
import { artRoutes } from './routes.js';
import { artUpstream } from './upstream.js';

/** The image family with four submit actions and one query (spec 2.7, 3.5, 4.14). */
export const artFamily: FamilyModule = {
  routes: [artRoutes],
  projections: [artTaskProjection],
  upstreams: [artUpstream],
  catalog: artCatalog,
  callbackBodies: viewBody(ART_FAMILY, artTaskProjection),
};
