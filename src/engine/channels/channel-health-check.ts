/**
 * The periodic health check (CHANNEL_HEALTH_INTERVAL_MS): every enabled channel gets a light
 * request (channel-probe.ts) through its circuit breaker, so a channel nobody sends tasks to is
 * still judged, an open one gets its trial without waiting for traffic, and a recovered one
 * closes on its own. A channel whose circuit is open and not yet due for its trial, or whose
 * trial is under way, is left alone in that pass.
 */
import type { Logger } from 'pino';
import type { Catalog } from './catalog.js';
import type { ChannelHealth, CheckOutcome } from './channel-health.js';
import { probeChannel } from './channel-probe.js';
import { periodic, type Periodic } from '../upkeep/periodic.js';
import { Semaphore } from '../../lib/semaphore.js';
import { resolveBaseUrl, type UpstreamRegistry } from './upstream.js';

/** Checks in flight at once: a gateway with hundreds of channels does not open hundreds of connections. */
const CONCURRENT_CHECKS = 8;

export interface ChannelHealthCheckDeps {
  catalog: Pick<Catalog, 'channels'>;
  health: ChannelHealth;
  upstreams: UpstreamRegistry;
  /** Where channel base URLs that are paths (the simulator) resolve. */
  selfUrl: () => string;
  log: Logger;
  /** Longest one channel's check may take (default HEALTH_CHECK_TIMEOUT_MS). */
  timeoutMs?: number;
}

export function createChannelHealthCheck(deps: ChannelHealthCheckDeps): Periodic {
  const limit = new Semaphore(CONCURRENT_CHECKS);
  return periodic('channel-health', deps.log, async () => {
    const channels = deps.catalog.channels();
    const known = new Set(channels.map((c) => c.channelId));
    deps.health.retain((id) => known.has(id));
    const outcomes = await Promise.all(
      channels
        .filter((c) => c.status === 1)
        .map((channel) =>
          limit.run(async () => {
            const outcome = await deps.health.check(channel.channelId, () =>
              probeChannel(channel, resolveBaseUrl(channel.baseUrl, deps.selfUrl()), deps.upstreams.get(channel.family), deps.timeoutMs),
            );
            if (outcome === 'failed')
              deps.log.warn({ channelId: channel.channelId, reason: deps.health.of(channel.channelId).lastError }, 'channel health check failed');
            return outcome;
          }),
        ),
    );
    const count = (o: CheckOutcome) => outcomes.filter((x) => x === o).length;
    deps.log.debug({ passed: count('passed'), failed: count('failed'), skipped: count('skipped') }, 'channel health checked');
    return outcomes.length - count('skipped');
  });
}
