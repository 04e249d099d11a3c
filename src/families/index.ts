/**
 * Every generation family's contribution: routes, query views and upstream adapters. The list
 * below is the built-in one; `composeFamilies` turns any list into what the gateway registers,
 * so a family added by `GatewayOptions.extraFamilies` (src/gateway.ts) is composed the same way.
 */
import type { CallbackBody } from '../engine/outbound/callbacks.js';
import type { UpstreamAdapter } from '../engine/channels/upstream.js';
import type { GatewayDeps } from '../http/deps.js';
import type { RoutePlugin } from '../http/server.js';
import type { Projection } from '../../projections/projection.js';
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

/** What a list of families contributes to one gateway. */
export interface ComposedFamilies {
  /** Every family's routes, then the paths several families share, registered once each. */
  routes: readonly RoutePlugin[];
  projections: readonly Projection[];
  upstreams: readonly UpstreamAdapter[];
  /** Callback bodies of every family, by TaskSubmitted family name (each folds the task's events). */
  callbackBodies(deps: GatewayDeps): ReadonlyMap<string, CallbackBody>;
}

export function composeFamilies(list: readonly FamilyModule[]): ComposedFamilies {
  return {
    routes: [
      ...list.flatMap((f) => f.routes),
      imageGenerationsRoute(list.flatMap((f) => f.imageGenerators ?? [])),
      syncResultRoutes(list.flatMap((f) => f.syncResults ?? [])),
    ],
    projections: list.flatMap((f) => f.projections),
    upstreams: list.flatMap((f) => f.upstreams),
    callbackBodies: (deps) => new Map(list.flatMap((f) => Object.entries(f.callbackBodies?.(deps) ?? {}))),
  };
}

/** The built-in families' views and adapters (scripts and tests that need no gateway). */
export const familyProjections = families.flatMap((f) => f.projections);
export const upstreamAdapters = families.flatMap((f) => f.upstreams);
