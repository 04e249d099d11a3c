import { syncResultProjection } from '../../../projections/sync-result.js';
import type { FamilyModule } from '../family.js';
import { chatRoutes } from './chat-route.js';
import { imagesRoutes } from './images-route.js';
import { syncQueryRoutes } from './query-routes.js';

/**
 * Synchronous std-image / pro-image (spec 4.5, 4.6) and the shared `/v1/images/generations`
 * route that also serves the picgen models. Sync calls run in the request (runSyncTask), so
 * there is no poll adapter. The `sync-results` view holds how every synchronous call ended
 * (picgen's too), which the query routes answer by id.
 */
export const syncImagesFamily: FamilyModule = {
  name: 'images-sync',
  routes: [chatRoutes, imagesRoutes, syncQueryRoutes],
  projections: [syncResultProjection],
  upstreams: [],
};
