/**
 * Waiting between tries: the delay schedule (exponential, capped, jittered) and a retry loop
 * that waits it. Every retry in the gateway takes its delays from here, each with its own
 * bounds, so a schedule reads as data where it is used ("100 ms doubling, at most 10 s").
 *
 * This lives outside the engine because the adapters (the ESDB subscription, the Kafka member)
 * wait the same way, and adapters must not depend on the engine.
 */

import { DelegateBackoff, handleWhen, retry as cockatielRetry, type IRetryBackoffContext } from 'cockatiel';

/**
 * How a planned delay is spread, so that many clients that failed together do not retry
 * together.
 * - `none`: the planned delay exactly.
 * - `full`: anywhere in [0, delay) ("full jitter"): spreads the most, may retry at once.
 * - `equal`: in [delay/2, delay) ("equal jitter"): spread, but never much sooner than planned.
 * - `{ spread }`: within ±spread of the delay (0.1: 90 %–110 %), for a fixed schedule.
 */
export type Jitter = 'none' | 'full' | 'equal' | { spread: number };

export interface Backoff {
  /** Delay before the first retry (attempt 0); each later attempt doubles it. */
  initialMs: number;
  /** Ceiling on the delay, applied before jitter (default: none). */
  maxMs?: number;
  /**
   * Doublings counted at most (default: no limit). Keeps `initialMs * 2 ** n` finite for long
   * outages, and a schedule whose growth stops after n doublings exact.
   */
  maxDoublings?: number;
  jitter?: Jitter;
}

/** The delay before retry number `attempt` (0 for the first retry). */
export function backoffDelay(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
  const doublings = Math.min(attempt, backoff.maxDoublings ?? Number.POSITIVE_INFINITY);
  const planned = Math.min(backoff.maxMs ?? Number.POSITIVE_INFINITY, backoff.initialMs * 2 ** doublings);
  return jittered(planned, backoff.jitter ?? 'none', random);
}

/** `ms` spread as `jitter` says. */
export function jittered(ms: number, jitter: Jitter, random: () => number = Math.random): number {
  if (jitter === 'none') return ms;
  if (jitter === 'full') return random() * ms;
  if (jitter === 'equal') return ms / 2 + random() * (ms / 2);
  return ms * (1 - jitter.spread + random() * (2 * jitter.spread));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface RetryOptions {
  backoff: Backoff;
  /**
   * Whether a failure is tried again (`attempt`: the try that failed, from 0). Asked at each
   * failure, so a stop that happened meanwhile is seen; when it says no, the failure is thrown.
   * Default: always.
   */
  retryIf?(err: unknown, attempt: number): boolean;
  /** Told of each failure that will be tried again, before the wait (to log it). */
  onRetry?(err: unknown, attempt: number, delayMs: number): void;
  /**
   * Ends the retrying at once, a wait included: the returned promise rejects with the signal's
   * reason, and no further try starts (a wait's timer no longer holds the process open).
   */
  signal?: AbortSignal;
}

/**
 * Runs `work` until it resolves, waiting `backoff` between tries: a cockatiel retry policy
 * with this module's schedule. `work` gets the number of the try (0 first), so it can give up
 * quietly on a later try by resolving.
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  let attempt = 0;
  const retrying = cockatielRetry(
    handleWhen((err) => options.retryIf?.(err, attempt) ?? true),
    // cockatiel counts retries from 1; this schedule from 0.
    {
      maxAttempts: Number.POSITIVE_INFINITY,
      backoff: new DelegateBackoff((context: IRetryBackoffContext<unknown>) => backoffDelay(options.backoff, context.attempt - 1)),
    },
  );
  const { signal } = options;
  // cockatiel's wait between tries does not listen to the signal: with one, its timer must not hold the process.
  const policy = signal ? retrying.dangerouslyUnref() : retrying;
  const listener = policy.onRetry((event) => options.onRetry?.('error' in event ? event.error : event.value, event.attempt - 1, event.delay));
  const run = policy.execute((context) => {
    attempt = context.attempt;
    return work(context.attempt);
  }, signal);
  try {
    if (!signal) return await run;
    signal.throwIfAborted();
    let onAbort!: () => void;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    // The run left behind ends by itself: it tries nothing more once the signal is aborted.
    run.catch(() => undefined);
    try {
      return await Promise.race([run, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  } finally {
    listener.dispose();
  }
}
