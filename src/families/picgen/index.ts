import type { FamilyModule } from '../family.js';
import { picgenEditRoutes } from './routes.js';

/**
 * Synchronous picgen (spec 4.7, 4.8): `/v1/images/edits` here; generations are dispatched to
 * this family by the shared `/v1/images/generations` route of src/families/sync-images.
 */
export const picgenSyncFamily: FamilyModule = {
  name: 'picgen-sync',
  routes: [picgenEditRoutes],
  projections: [],
  upstreams: [],
};
