import type { UpstreamAdapter } from '../engine/upstream.js';
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
}
