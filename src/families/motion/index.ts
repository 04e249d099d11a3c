import { MOTION_FAMILY, motionTaskProjection } from '../../../projections/motion-task.js';
import { viewBody } from '../query-body.js';
import type { FamilyModule } from '../family.js';
import { motionRoutes } from './routes.js';
import { motionUpstream } from './upstream.js';

export const motionFamily: FamilyModule = {
  name: 'motion',
  routes: [motionRoutes],
  projections: [motionTaskProjection],
  upstreams: [motionUpstream],
  queryBodies: viewBody(MOTION_FAMILY, motionTaskProjection),
};
