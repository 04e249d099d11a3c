import { VIDGEN_FAMILY, vidgenTaskProjection } from '../../../projections/vidgen-task.js';
import { viewBody } from '../query-body.js';
import type { FamilyModule } from '../family.js';
import { vidgenRoutes } from './routes.js';
import { vidgenUpstream } from './upstream.js';

export const vidgenFamily: FamilyModule = {
  name: 'vidgen',
  routes: [vidgenRoutes],
  projections: [vidgenTaskProjection],
  upstreams: [vidgenUpstream],
  queryBodies: viewBody(VIDGEN_FAMILY, vidgenTaskProjection),
};
