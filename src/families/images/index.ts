import type { Projection } from '../../../projections/projection.js';
import { imageTaskProjection } from '../../../projections/image-task.js';
import type { FamilyModule } from '../family.js';
import { asyncImageRoutes } from './async-routes.js';
import { asyncImagesUpstream } from './upstream.js';

export const asyncImagesFamily: FamilyModule = {
  name: 'images-async',
  routes: [asyncImageRoutes],
  projections: [imageTaskProjection as Projection],
  upstreams: [asyncImagesUpstream],
};
