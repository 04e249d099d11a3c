import { CLIP_FAMILY, clipTaskProjection } from '../../../projections/clip-task.js';
import { viewBody } from '../query-body.js';
import type { FamilyModule } from '../family.js';
import { clipRoutes } from './routes.js';
import { clipUpstream } from './upstream.js';

export const clipFamily: FamilyModule = {
  name: 'clip',
  routes: [clipRoutes],
  projections: [clipTaskProjection],
  upstreams: [clipUpstream],
  queryBodies: viewBody(CLIP_FAMILY, clipTaskProjection),
};
