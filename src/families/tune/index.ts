import { TUNE_FAMILY, tuneTaskProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { tuneCatalog } from './catalog.js';
import { tuneRoutes } from './routes.js';
import { tuneUpstream } from './upstream.js';

/** Music and lyrics (spec 2.6, 3.4, 4.11). */
export const tuneFamily: FamilyModule = {
  routes: [tuneRoutes],
  projections: [tuneTaskProjection],
  upstreams: [tuneUpstream],
  catalog: tuneCatalog,
  callbackBodies: viewBody(TUNE_FAMILY, tuneTaskProjection),
};
