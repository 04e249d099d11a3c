import { VIDGEN_FAMILY, vidgenTaskProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { vidgenCatalog } from './catalog.js';
import { vidgenRoutes } from './routes.js';
import { vidgenUpstream } from './upstream.js';

export const vidgenFamily: FamilyModule = {
  routes: [vidgenRoutes],
  projections: [vidgenTaskProjection],
  upstreams: [vidgenUpstream],
  catalog: vidgenCatalog,
  callbackBodies: viewBody(VIDGEN_FAMILY, vidgenTaskProjection),
};
