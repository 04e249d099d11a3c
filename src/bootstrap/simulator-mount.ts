/**
 * Whether this start mounts the built-in simulator at `/_sim` (docs/decisions/0140-simulator-off-by-default-and-limited.md).
 * `SIMULATOR=1` or `0` decides. `auto` (the default) mounts it only on a gateway that has nothing
 * else to call: not with `NODE_ENV=production`, and not when a real channel is configured, that is
 * when the bootstrap file names, or the store already holds (created by an earlier bootstrap or
 * through the admin API, enabled or not), a channel whose base URL is not the simulator's own
 * `/_sim`. Decided once, at start: a real channel created while the gateway runs takes the
 * simulator away on the next start.
 */
import type { Config } from '../config.js';

/** What a channel says about where it sends its calls. */
export interface ChannelBase {
  id: string;
  baseUrl: string;
}

export interface SimulatorMount {
  mounted: boolean;
  /** Why, in the words of the start's log line. */
  why: string;
}

/** A channel of the built-in simulator: its base URL is the simulator's path, resolved against this gateway (or SIMULATOR_URL). */
export function isSimulatorChannel(channel: ChannelBase, simulatorBaseUrl: string): boolean {
  return channel.baseUrl.trim().replace(/\/+$/, '') === simulatorBaseUrl;
}

export function simulatorMount(config: Pick<Config, 'simulator' | 'nodeEnv'>, configured: readonly ChannelBase[], simulatorBaseUrl: string): SimulatorMount {
  if (config.simulator === true) return { mounted: true, why: 'SIMULATOR=1' };
  if (config.simulator === false) return { mounted: false, why: 'SIMULATOR=0' };
  if (config.nodeEnv === 'production') return { mounted: false, why: 'SIMULATOR=auto and NODE_ENV=production' };
  const real = configured.find((c) => !isSimulatorChannel(c, simulatorBaseUrl));
  if (real) return { mounted: false, why: `SIMULATOR=auto and a real channel is configured (channel ${real.id})` };
  return { mounted: true, why: 'SIMULATOR=auto and no channel other than the simulator’s is configured' };
}
