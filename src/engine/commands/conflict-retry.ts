/**
 * What a writer does when its append conflicts (`WrongExpectedRevisionError`: another writer
 * appended to the stream first): it reads the stream again and decides again on it as it now
 * is. One policy for every writer of an event stream — the command handler, the account
 * service, the channel key rotation:
 *
 * - **The first conflict is decided again at once.** One other writer is the usual cause, and
 *   each round at least one of the writers racing on a stream succeeds, so a second try nearly
 *   always goes through; waiting would only slow it down.
 * - **Later conflicts wait first**: 2 ms doubling, at most 100 ms, with full jitter. A stream
 *   that keeps conflicting has several writers deciding in lockstep (api instances reserving
 *   and a worker settling on one busy account); spreading their next tries apart is what lets
 *   them through, instead of all of them reading, deciding and colliding again.
 * - **Bounded, by what the stream is.** A stream with few writers (a task, a token, a user, the
 *   price table) is retried at most `CONFLICT_RETRIES` times: contended beyond that is a fault
 *   worth surfacing, and the conflict is thrown. The account stream is written by every submit
 *   and every settlement, from every instance: one busy customer must wait, not fail, so it is
 *   retried for as long as `ACCOUNT_CONFLICT_BUDGET_MS` allows, however many conflicts that
 *   takes (docs/decisions/0065-account-state-cached-conflicts-retried.md,
 *   docs/decisions/0119-hot-account-keeps-closing-its-books.md, docs/decisions/0134-one-conflict-policy.md), and only then refused (503 `account_busy`).
 *
 * Before this module the command handler retried five times at once and the account service
 * waited a jittered backoff from its first conflict: the handler's first retry is unchanged,
 * and the account's first retry no longer waits its 0–2 ms.
 */
import { backoffDelay, sleep, type Backoff } from '../../lib/backoff.js';
import { WrongExpectedRevisionError } from '../../ports/event-store.js';

/** How long a writer goes on deciding again: a number of retries, or a time from its first try. */
export type ConflictBound = Readonly<{ retries: number }> | Readonly<{ withinMs: number }>;

/**
 * Conflicts decided again before the last one is thrown, on a stream with few writers. Each
 * round at least one of the contending writers succeeds, so this many retries see a command
 * through that many writers racing on one stream.
 */
export const CONFLICT_RETRIES = 5;

/** How long a command on the account stream goes on deciding again (then `AccountContendedError`, 503). */
export const ACCOUNT_CONFLICT_BUDGET_MS = 10_000;

/** Streams with few writers: every stream but the account's. */
export const FEW_WRITERS: ConflictBound = { retries: CONFLICT_RETRIES };
/** The account stream: many writers, and a customer who must wait rather than fail. */
export const MANY_WRITERS: ConflictBound = { withinMs: ACCOUNT_CONFLICT_BUDGET_MS };

/** The wait before each retry after the first (the first is at once). */
export const CONFLICT_BACKOFF: Backoff = { initialMs: 2, maxMs: 100, jitter: 'full' };

export interface ConflictRetry {
  /**
   * After a failed append: whether to read and decide again. True for a conflict within the
   * bound (after waiting as the policy says); false for any other failure, or past the bound —
   * the caller then throws (or refuses) as it must.
   */
  again(err: unknown): Promise<boolean>;
}

/** One command's retries; `now` (milliseconds) starts the time bound at this call. */
export function conflictRetry(bound: ConflictBound, now: () => number = Date.now): ConflictRetry {
  const started = now();
  let retries = 0;
  return {
    async again(err) {
      if (!(err instanceof WrongExpectedRevisionError)) return false;
      const within = 'retries' in bound ? retries < bound.retries : now() - started < bound.withinMs;
      if (!within) return false;
      const retry = retries++;
      if (retry > 0) await sleep(backoffDelay(CONFLICT_BACKOFF, retry));
      return true;
    },
  };
}
