/** Every generation family's contribution: routes, query views and upstream adapters. */
import type { CallbackBody } from '../engine/outbound/callbacks.js';
import type { GatewayDeps } from '../http/deps.js';
import type { FamilyModule } from './family.js';
import { imageGenerationsRoute, syncResultRoutes } from './kit/shared-paths.js';
import { artFamily } from './art/index.js';
import { asyncImagesFamily } from './images/index.js';
import { tuneFamily } from './tune/index.js';
import { vidgenFamily } from './vidgen/index.js';
import { vidH3Family } from './vid-h3/index.js';
import { syncImagesFamily } from './sync-images/index.js';
import { picgenSyncFamily } from './picgen/index.js';
import { clipFamily } from './clip/index.js';
import { motionFamily } from './motion/index.js';

export const families: readonly FamilyModule[] = [
  asyncImagesFamily,
  vidgenFamily,
  tuneFamily,
  artFamily,
  vidH3Family,
  syncImagesFamily,
  picgenSyncFamily,
  clipFamily,
  motionFamily,
];

/** Every family's routes, then the paths several families share, registered once each. */
export const familyRoutes = [
  ...families.flatMap((f) => f.routes),
  imageGenerationsRoute(families.flatMap((f) => f.imageGenerators ?? [])),
  syncResultRoutes(families.flatMap((f) => f.syncResults ?? [])),
];
export const familyProjections = families.flatMap((f) => f.projections);
export const upstreamAdapters = families.flatMap((f) => f.upstreams);

/** Callback bodies of every family, by TaskSubmitted family name (each folds the task's events). */
export function familyCallbackBodies(deps: GatewayDeps): ReadonlyMap<string, CallbackBody> {
  return new Map(families.flatMap((f) => Object.entries(f.callbackBodies?.(deps) ?? {})));
}
