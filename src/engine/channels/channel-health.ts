/**
 * Channel health: a circuit breaker per channel (cockatiel's, on consecutive failures), fed by
 * the real upstream tries of the fail-over loop (failover.ts) and by the periodic health check
 * (channel-health-check.ts).
 *
 * - Closed: the channel is tried. A retryable failure (5xx, 429, network, timeout, an answer
 *   that cannot be read) counts; a success resets the count; a refusal of the request (a
 *   non-retryable UpstreamError, 4xx) is no verdict: it is the request's fault, not the channel's.
 * - Open after `failures` in a row: the channel is not called; fail-over skips it.
 * - After `halfOpenAfterMs` the next try (a task's or the health check's) is the one trial:
 *   it closes the circuit on success and opens it again on failure. While it runs, other tries
 *   skip the channel rather than wait for it.
 * - A call cut off by the task's own deadline is no verdict in the closed state (the deadline is
 *   the task's budget, partly spent before this channel, not a limit the channel was given); in
 *   a trial it does not prove the channel healthy, so it counts as the trial's failure.
 *
 * The state lives in this process: each instance (each worker, each api process for its
 * synchronous calls) judges the channels by what it sees itself.
 */
import { CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen, isBrokenCircuitError, type CircuitBreakerPolicy } from 'cockatiel';
import type { Logger } from 'pino';
import { TaskDeadlineError } from '../tasks/deadline.js';
import { UpstreamError } from './upstream.js';

export type CircuitStateName = 'closed' | 'open' | 'half_open';

/** One channel's health as this process sees it (the admin API and metrics read it). */
export interface ChannelHealthSnapshot {
  channelId: string;
  state: CircuitStateName;
  /** Retryable failures since the last success (tries and health checks alike). */
  consecutiveFailures: number;
  lastFailureAt: Date | undefined;
  lastError: string | undefined;
  /** When the health check last called the channel. */
  lastCheckAt: Date | undefined;
}

export interface ChannelHealthOptions {
  /** Consecutive failures that open the circuit (CHANNEL_BREAKER_FAILURES). */
  failures: number;
  /** How long an open circuit stays open before a trial (CHANNEL_BREAKER_HALF_OPEN_MS). */
  halfOpenAfterMs: number;
  log: Logger;
  /** Stamps the times shown; the breaker's own timing is cockatiel's (wall clock). */
  clock: () => Date;
}

/** The circuit did not let this try through: a retryable failure, so fail-over moves on. */
export class ChannelUnavailableError extends UpstreamError {
  constructor(channelId: string) {
    super(`channel ${channelId} is unavailable: its circuit is open after repeated upstream failures`, true);
    this.name = 'ChannelUnavailableError';
  }
}

/** What a health check of one channel came to. */
export type CheckOutcome = 'passed' | 'failed' | 'skipped';

export interface ChannelHealth {
  /** Whether a try may start now: the circuit is closed, or open long enough for its trial. */
  admits(channelId: string): boolean;
  /**
   * Runs an upstream call under the channel's breaker and judges its outcome; throws
   * ChannelUnavailableError when the circuit does not let it through.
   */
  run<T>(channelId: string, work: () => Promise<T>): Promise<T>;
  /** A health check: `probe` resolves when the channel answered, throws a retryable UpstreamError when not. */
  check(channelId: string, probe: () => Promise<void>): Promise<CheckOutcome>;
  of(channelId: string): ChannelHealthSnapshot;
  /** Every channel this process has judged. */
  snapshot(): ChannelHealthSnapshot[];
  /** Drops the state of channels that no longer exist. */
  retain(exists: (channelId: string) => boolean): void;
}

/** A failure of the channel itself: counts towards opening its circuit. */
function isChannelFailure(err: unknown): boolean {
  return err instanceof UpstreamError && err.retryable;
}

interface Entry {
  policy: CircuitBreakerPolicy;
  counter: ConsecutiveBreaker;
  /** Wall-clock milliseconds of the last opening (cockatiel times the open state on Date.now). */
  openedAt: number;
  lastFailureAt?: Date;
  lastError?: string;
  lastCheckAt?: Date;
}

const stateNames: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open',
};

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function createChannelHealth(options: ChannelHealthOptions): ChannelHealth {
  const entries = new Map<string, Entry>();

  function entryOf(channelId: string): Entry {
    const existing = entries.get(channelId);
    if (existing) return existing;
    const counter = new ConsecutiveBreaker(options.failures);
    const judged = handleWhen((err) => isChannelFailure(err) || (err instanceof TaskDeadlineError && policy.state === CircuitState.HalfOpen));
    const policy = circuitBreaker(judged, { halfOpenAfter: options.halfOpenAfterMs, breaker: counter });
    const entry: Entry = { policy, counter, openedAt: 0 };
    const log = options.log.child({ channelId });
    policy.onFailure(({ handled, reason }) => {
      if (!handled) return;
      entry.lastFailureAt = options.clock();
      entry.lastError = 'error' in reason ? messageOf(reason.error) : 'failed';
    });
    policy.onBreak(() => {
      entry.openedAt = Date.now();
      log.warn(
        { consecutiveFailures: counter.state, reason: entry.lastError, halfOpenAfterMs: options.halfOpenAfterMs },
        'channel circuit opened: the channel is skipped until a trial call succeeds',
      );
    });
    policy.onHalfOpen(() => log.info('channel circuit half-open: one trial call goes through'));
    policy.onReset(() => log.info('channel circuit closed: the channel is tried again'));
    entries.set(channelId, entry);
    return entry;
  }

  function admits(channelId: string): boolean {
    const entry = entries.get(channelId);
    if (!entry) return true;
    switch (entry.policy.state) {
      case CircuitState.Closed:
        return true;
      case CircuitState.Open:
        return Date.now() - entry.openedAt >= options.halfOpenAfterMs;
      default:
        // Half-open: the one trial is under way. Isolated: held open.
        return false;
    }
  }

  async function run<T>(channelId: string, work: () => Promise<T>): Promise<T> {
    const entry = entryOf(channelId);
    // cockatiel makes a call that meets a trial under way wait for it; fail-over has better to do.
    if (entry.policy.state === CircuitState.HalfOpen) throw new ChannelUnavailableError(channelId);
    try {
      return await entry.policy.execute(() => work());
    } catch (err) {
      if (isBrokenCircuitError(err)) throw new ChannelUnavailableError(channelId);
      throw err;
    }
  }

  function of(channelId: string): ChannelHealthSnapshot {
    const entry = entries.get(channelId);
    return {
      channelId,
      state: entry ? stateNames[entry.policy.state] : 'closed',
      consecutiveFailures: entry?.counter.state ?? 0,
      lastFailureAt: entry?.lastFailureAt,
      lastError: entry?.lastError,
      lastCheckAt: entry?.lastCheckAt,
    };
  }

  return {
    admits,
    run,
    async check(channelId, probe) {
      if (!admits(channelId)) return 'skipped';
      entryOf(channelId).lastCheckAt = options.clock();
      try {
        await run(channelId, probe);
        return 'passed';
      } catch (err) {
        if (err instanceof ChannelUnavailableError) return 'skipped';
        return isChannelFailure(err) ? 'failed' : 'passed';
      }
    },
    of,
    snapshot: () => [...entries.keys()].map(of),
    retain(exists) {
      for (const id of entries.keys()) if (!exists(id)) entries.delete(id);
    },
  };
}
