import type { Projection } from '../../../projections/projection.js';
import { vidgenTaskProjection } from '../../../projections/vidgen-task.js';
import type { FamilyModule } from '../family.js';
import { vidgenRoutes } from './routes.js';
import { vidgenUpstream } from './upstream.js';

export const vidgenFamily: FamilyModule = {
  name: 'vidgen',
  routes: [vidgenRoutes],
  projections: [vidgenTaskProjection as Projection],
  upstreams: [vidgenUpstream],
};
