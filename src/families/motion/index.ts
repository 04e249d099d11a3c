import { MOTION_FAMILY, motionTaskProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { motionCatalog } from './catalog.js';
import { motionRoutes } from './routes.js';
import { motionUpstream } from './upstream.js';

export const motionFamily: FamilyModule = {
  routes: [motionRoutes],
  projections: [motionTaskProjection],
  upstreams: [motionUpstream],
  catalog: motionCatalog,
  callbackBodies: viewBody(MOTION_FAMILY, motionTaskProjection),
};
