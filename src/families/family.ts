import type { CallbackBody } from '../engine/outbound/callbacks.js';
import type { UpstreamAdapter } from '../engine/channels/upstream.js';
import type { GatewayDeps } from '../http/deps.js';
import type { RoutePlugin } from '../http/server.js';
import type { ModelEntry } from './kit/prices.js';
import type { ImageGenerator, SyncResultRoute } from './kit/shared-paths.js';
import type { Projection } from '../../projections/projection.js';

/** What one generation family contributes to the gateway. */
export interface FamilyModule {
  routes: readonly RoutePlugin[];
  /** Query views of this family's tasks. */
  projections: readonly Projection[];
  /** Upstream protocols, by channel family. */
  upstreams: readonly UpstreamAdapter[];
  /** The models it serves, with the default prices the embedded deployment starts with. */
  catalog: readonly ModelEntry[];
  /**
   * The body of completion callbacks, by TaskSubmitted family name: the query view of a task as
   * its owner reads it, folded from the task's events up to the one that scheduled the callback.
   */
  callbackBodies?: (deps: GatewayDeps) => Readonly<Record<string, CallbackBody>>;
  /** Its models on the shared `POST /v1/images/generations` (kit/shared-paths.ts). */
  imageGenerators?: readonly ImageGenerator[];
  /** Its synchronous calls' results by id, `GET <path>/{id}` (kit/shared-paths.ts). */
  syncResults?: readonly SyncResultRoute[];
}
