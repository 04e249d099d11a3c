/**
 * Channel fail-over: the one loop behind every upstream call that may go to several channels,
 * the dispatcher's async submits (dispatcher.ts) and synchronous calls (sync-task.ts).
 *
 * The shared rules:
 * - Candidates: the task's channels that are known, enabled and usable (and not tried before),
 *   higher priority first, weighted random within a priority (channel-order.ts).
 * - Attempts are numbered on from the task's earlier tries, one per channel tried.
 * - A retryable UpstreamError moves on to the next channel; a non-retryable one stops the loop
 *   (the upstream refused the request itself, another channel would refuse it too). Either is
 *   logged and recorded (the caller's `recordFailure`) before the loop moves on or stops.
 * - Anything else thrown by a call (the task's deadline, the gateway's own failure) stops the
 *   loop too and is handed back: what it means is the caller's to decide.
 * - Channel health (channel-health.ts), when given: a channel whose circuit is open is skipped
 *   before anything else (not called, no attempt number, nothing recorded), and every call runs
 *   under its breaker, which judges the outcome. When every channel was skipped the loop is
 *   exhausted like one whose channels all failed, with `ChannelsUnavailableError` as the failure:
 *   an upstream known to be down is not called again before its trial is due.
 *
 * What is each caller's own stays with it: the submit lease and ownership check before an async
 * try (`beforeTry`), the events recorded, and what the end of the loop means for the task.
 */
import type { Logger } from 'pino';
import type { ChannelDoc } from '../../../projections/channels.js';
import type { Catalog } from './catalog.js';
import type { ChannelHealth } from './channel-health.js';
import { orderChannels } from './channel-order.js';
import { UpstreamError } from './upstream.js';

/** Why a task failed when no channel answered (none was left to try, or none could be). */
export const NO_CHANNEL_REASON = 'no enabled channel serves this model';

/** Why a task failed when every channel serving it was skipped for an open circuit. */
export const CHANNELS_UNAVAILABLE_REASON = 'every channel serving this model is failing and paused (circuit open); try again shortly';

/** The loop's failure when no channel was called: each one's circuit is open. */
export class ChannelsUnavailableError extends UpstreamError {
  constructor() {
    super(CHANNELS_UNAVAILABLE_REASON, true);
    this.name = 'ChannelsUnavailableError';
  }
}

export interface CandidateFilter {
  /** Channels already tried by this task (an async task dispatched again). */
  exclude?: ReadonlySet<string>;
  /** Whether this gateway can call the channel at all (e.g. has an adapter for its family). */
  usable?: (channel: ChannelDoc) => boolean;
}

/** The task's candidate channels that may be tried, in the order to try them. */
export function failoverChannels(
  catalog: Pick<Catalog, 'channel'>,
  candidateIds: readonly string[],
  filter: CandidateFilter = {},
  random?: () => number,
): ChannelDoc[] {
  const channels = candidateIds
    .filter((id) => !filter.exclude?.has(id))
    .map((id) => catalog.channel(id))
    .filter((c): c is ChannelDoc => c !== undefined && c.status === 1 && (filter.usable?.(c) ?? true));
  return orderChannels(channels, random);
}

/** One try: the channel and the task's attempt number it is recorded under. */
export interface FailoverTry {
  channel: ChannelDoc;
  attempt: number;
}

export interface FailoverOptions<T> {
  /** In the order to try them (`failoverChannels`). */
  channels: readonly ChannelDoc[];
  /** Tries the task made before these: attempt numbers go on from there. Default 0. */
  attemptsBefore?: number;
  log: Logger;
  /** Logged with each failed try (e.g. the task id). */
  logFields: Readonly<Record<string, unknown>>;
  /** The message a failed try is logged with. */
  failedMessage: string;
  /** Before each try; false stops the loop here (whoever said no has taken care of the task). */
  beforeTry?(t: FailoverTry): Promise<boolean>;
  /** The upstream call; throws UpstreamError for a failure of the channel. */
  call(t: FailoverTry): Promise<T>;
  /** Records a failed try, before the loop moves on or stops. */
  recordFailure(t: FailoverTry, failure: UpstreamError): Promise<void>;
  /** Circuit breakers per channel: open ones are skipped, every call is judged. Default: none. */
  health?: ChannelHealth | undefined;
}

export type FailoverOutcome<T> =
  /** A channel answered. */
  | { kind: 'succeeded'; channel: ChannelDoc; attempt: number; value: T }
  /** `beforeTry` said no. */
  | { kind: 'stopped' }
  /** A channel refused for good (a non-retryable UpstreamError). */
  | { kind: 'refused'; failure: UpstreamError }
  /** Every channel failed (retryably) or was skipped, or there was none: `failure` is the last one's. */
  | { kind: 'exhausted'; failure: UpstreamError | undefined }
  /** A call threw something other than an UpstreamError. */
  | { kind: 'threw'; channel: ChannelDoc; attempt: number; error: unknown };

/** Tries the channels in turn until one answers or the rules above say stop. */
export async function failover<T>(options: FailoverOptions<T>): Promise<FailoverOutcome<T>> {
  const { health } = options;
  let attempt = options.attemptsBefore ?? 0;
  let failure: UpstreamError | undefined;
  let skipped = 0;
  for (const channel of options.channels) {
    if (health && !health.admits(channel.channelId)) {
      skipped++;
      options.log.debug({ ...options.logFields, channelId: channel.channelId }, 'channel skipped: its circuit is open');
      continue;
    }
    const t: FailoverTry = { channel, attempt: ++attempt };
    if (options.beforeTry && !(await options.beforeTry(t))) return { kind: 'stopped' };
    let value: T;
    try {
      value = await (health ? health.run(channel.channelId, () => options.call(t)) : options.call(t));
    } catch (err) {
      if (!(err instanceof UpstreamError)) return { kind: 'threw', channel, attempt, error: err };
      failure = err;
      options.log.warn({ ...options.logFields, channelId: channel.channelId, retryable: err.retryable, reason: err.message }, options.failedMessage);
      await options.recordFailure(t, err);
      if (!err.retryable) return { kind: 'refused', failure: err };
      continue;
    }
    return { kind: 'succeeded', channel, attempt, value };
  }
  return { kind: 'exhausted', failure: failure ?? (skipped > 0 ? new ChannelsUnavailableError() : undefined) };
}

/** The reason a task that no channel answered fails with. */
export function exhaustedReason(failure: UpstreamError | undefined): string {
  return failure?.message ?? NO_CHANNEL_REASON;
}
