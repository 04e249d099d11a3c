import type { Projection } from '../../../projections/projection.js';
import { motionTaskProjection } from '../../../projections/motion-task.js';
import type { FamilyModule } from '../family.js';
import { motionRoutes } from './routes.js';
import { motionUpstream } from './upstream.js';

export const motionFamily: FamilyModule = {
  name: 'motion',
  routes: [motionRoutes],
  projections: [motionTaskProjection as Projection],
  upstreams: [motionUpstream],
};
