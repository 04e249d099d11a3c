import { imageTaskProjection } from '../../../projections/image-task.js';
import type { FamilyModule } from '../family.js';
import { asyncImagesCatalog } from './catalog.js';
import { asyncImagesSimFamily } from './simulator.js';
import { taskViewFor } from '../../http/task-views.js';
import { IMAGE_FAMILY } from '../../../projections/image-task.js';
import { asyncImageRoutes, withInlineBase64 } from './async-routes.js';
import { asyncImagesUpstream } from './upstream.js';

export const asyncImagesFamily: FamilyModule = {
  name: 'images-async',
  routes: [asyncImageRoutes],
  projections: [imageTaskProjection],
  upstreams: [asyncImagesUpstream],
  simulator: asyncImagesSimFamily,
  catalog: asyncImagesCatalog,
  queryBodies: (deps) => ({
    [IMAGE_FAMILY]: async (taskId, accountId) => {
      const doc = await taskViewFor(deps, imageTaskProjection, taskId, accountId);
      return doc ? withInlineBase64(deps, doc.body) : undefined;
    },
  }),
};
