import { IMAGE_FAMILY, imageTaskProjection } from './view.js';
import type { FamilyModule } from '../family.js';
import { asyncImagesCatalog } from './catalog.js';
import { taskViewFromEvents } from '../../engine/tasks/task-view.js';
import { asyncImageRoutes, withInlineBase64 } from './async-routes.js';
import { asyncImagesUpstream } from './upstream.js';

export const asyncImagesFamily: FamilyModule = {
  routes: [asyncImageRoutes],
  projections: [imageTaskProjection],
  upstreams: [asyncImagesUpstream],
  catalog: asyncImagesCatalog,
  callbackBodies: (deps) => ({
    [IMAGE_FAMILY]: async (events, taskId, accountId) => {
      const doc = taskViewFromEvents(deps, imageTaskProjection, events, taskId, accountId);
      return doc ? withInlineBase64(deps, doc.body, { required: true }) : undefined;
    },
  }),
};
