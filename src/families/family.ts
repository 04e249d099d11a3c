import type { QueryBody } from '../engine/callbacks.js';
import type { UpstreamAdapter } from '../engine/upstream.js';
import type { GatewayDeps } from '../http/deps.js';
import type { RoutePlugin } from '../http/server.js';
import type { Projection } from '../../projections/projection.js';

/** What one generation family contributes to the gateway. */
export interface FamilyModule {
  name: string;
  routes: readonly RoutePlugin[];
  /** Query views of this family's tasks. */
  projections: readonly Projection[];
  /** Upstream protocols, by channel family. */
  upstreams: readonly UpstreamAdapter[];
  /**
   * The query view of a task as its owner reads it, by TaskSubmitted family name: the body of
   * completion callbacks.
   */
  queryBodies?: (deps: GatewayDeps) => Readonly<Record<string, QueryBody>>;
}
