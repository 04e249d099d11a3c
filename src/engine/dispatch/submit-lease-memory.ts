/**
 * What one engine remembers and counts about submit leases between dispatches of a task (one per engine,
 * lost with the process; losing it is always safe, only slower or a re-submit under the same
 * client reference):
 *
 * - **Answers held unrecorded.** An upstream accepted a submit, and recording it failed (a store
 *   that did not answer). The next dispatch of the task records this answer under the same
 *   claim instead of submitting again; a claim replaced meanwhile fences it (the job is orphaned).
 * - **Claims watched.** Another owner's open claim is taken over only once this instance has
 *   itself seen that claim (the same epoch) open for a whole lease on its own clock: no instance's
 *   `leaseUntil` is compared with another instance's clock, so clock skew cannot shorten a lease.
 *
 * Both are bounded; the oldest entries are dropped first (a dropped answer means a new claim and
 * a submit with the same client reference, a dropped watch a longer wait).
 */

/** An upstream's acceptance of a submit made under the claim of `epoch`, not recorded yet. */
export interface HeldAnswer {
  epoch: number;
  channelId: string;
  attempt: number;
  upstreamTaskId: string;
}

/**
 * The window that remains, as this engine met it (each also logged at warn): claims taken over
 * an open one (its submit may have reached the upstream, which gets the task again under the same
 * Idempotency-Key), and upstream jobs orphaned by fencing. From zero at each start.
 */
export interface SubmitWindowCounts {
  claimedOverOpen: number;
  orphaned: number;
}

export interface SubmitLeaseMemory {
  /** Counted by the dispatcher where it logs them. */
  readonly counts: SubmitWindowCounts;
  hold(taskId: string, answer: HeldAnswer): void;
  held(taskId: string): HeldAnswer | undefined;
  release(taskId: string): void;
  /**
   * Notes that another owner's claim of `epoch` is open now; milliseconds until this instance has
   * watched it open for a whole lease (the watch starts at the first sight of that epoch).
   */
  watch(taskId: string, epoch: number, nowMs: number): number;
  /** The epoch of a claim watched open for a whole lease by `nowMs`: the one that may be taken over. */
  watchedOut(taskId: string, nowMs: number): number | undefined;
  unwatch(taskId: string): void;
}

/** Entries kept of each kind at most (a few hundred bytes each). */
const MAX_ENTRIES = 100_000;

export function createSubmitLeaseMemory(options: { leaseMs: number; maxEntries?: number }): SubmitLeaseMemory {
  const max = options.maxEntries ?? MAX_ENTRIES;
  const answers = new Map<string, HeldAnswer>();
  const watched = new Map<string, { epoch: number; sinceMs: number }>();
  const put = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    if (map.size >= max) map.delete(map.keys().next().value!);
    map.set(key, value);
  };
  return {
    counts: { claimedOverOpen: 0, orphaned: 0 },
    hold: (taskId, answer) => put(answers, taskId, answer),
    held: (taskId) => answers.get(taskId),
    release: (taskId) => void answers.delete(taskId),
    watch(taskId, epoch, nowMs) {
      let seen = watched.get(taskId);
      if (seen?.epoch !== epoch) put(watched, taskId, (seen = { epoch, sinceMs: nowMs }));
      return seen.sinceMs + options.leaseMs - nowMs;
    },
    watchedOut(taskId, nowMs) {
      const seen = watched.get(taskId);
      return seen && nowMs - seen.sinceMs >= options.leaseMs ? seen.epoch : undefined;
    },
    unwatch: (taskId) => void watched.delete(taskId),
  };
}
