import { CLIP_FAMILY, clipTaskProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { clipCatalog } from './catalog.js';
import { clipRoutes } from './routes.js';
import { clipUpstream } from './upstream.js';

export const clipFamily: FamilyModule = {
  routes: [clipRoutes],
  projections: [clipTaskProjection],
  upstreams: [clipUpstream],
  catalog: clipCatalog,
  callbackBodies: viewBody(CLIP_FAMILY, clipTaskProjection),
};
