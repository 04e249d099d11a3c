import type { FamilyModule } from '../family.js';
import { chatRoutes } from './chat-route.js';
import { imagesRoutes } from './images-route.js';

/**
 * Synchronous std-image / pro-image (spec 4.5, 4.6) and the shared `/v1/images/generations`
 * route that also serves the picgen models. Sync calls run in the request (runSyncTask), so
 * there is no poll adapter and no query view.
 */
export const syncImagesFamily: FamilyModule = {
  name: 'images-sync',
  routes: [chatRoutes, imagesRoutes],
  projections: [],
  upstreams: [],
};
