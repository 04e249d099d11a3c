/** Every generation family's contribution: routes, query views and upstream adapters. */
import type { FamilyModule } from './family.js';
import { asyncImagesFamily } from './images/index.js';

export const families: readonly FamilyModule[] = [asyncImagesFamily];

export const familyRoutes = families.flatMap((f) => f.routes);
export const familyProjections = families.flatMap((f) => f.projections);
export const upstreamAdapters = families.flatMap((f) => f.upstreams);
