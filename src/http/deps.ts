import type { Bus } from '../ports/bus.js';
import type { ProjectionRunner } from '../../projections/runner.js';
import type { TokenCache } from './auth/token-cache.js';
import type { BackgroundProcess } from '../lib/background.js';
import type { ChannelKeyCipher } from '../engine/channels/channel-key-cipher.js';
import type { RequestDeps } from '../engine/tasks/request-deps.js';
import type { GatewayMetrics } from '../metrics/registry.js';

/** Everything the HTTP layer needs, built once by the composition root (src/gateway.ts). */
export interface GatewayDeps extends RequestDeps {
  bus: Bus;
  runner: ProjectionRunner;
  tokens: TokenCache;
  /** Encrypts channel keys before they are appended (admin API, seeding). */
  channelKeys: ChannelKeyCipher;
  /** This role's background processes (reported by /readyz). */
  backgroundProcesses: () => readonly BackgroundProcess[];
  /** Prometheus instruments of this instance; undefined when METRICS_TOKEN is not set. */
  metrics?: GatewayMetrics | undefined;
}
