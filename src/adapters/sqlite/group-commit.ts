/**
 * Group commit: jobs enqueued in the same tick are handed to `runBatch` together on
 * setImmediate, so one transaction (one fsync) commits all of them. `runBatch` settles each job
 * on its own; if it throws (the commit itself failed), every job of the batch is rejected.
 */
export type JobOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommit<J, R> {
  enqueue(job: J): Promise<R>;
  /** Runs whatever is queued now, synchronously (used before closing). */
  flushNow(): void;
}

interface Pending<J, R> {
  job: J;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function createGroupCommit<J, R>(runBatch: (jobs: readonly J[]) => JobOutcome<R>[]): GroupCommit<J, R> {
  let queue: Pending<J, R>[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  function flushNow(): void {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    let outcomes: JobOutcome<R>[];
    try {
      outcomes = runBatch(batch.map((pending) => pending.job));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (!outcome) pending.reject(new Error('group commit produced no outcome for a job'));
      else if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }

  return {
    enqueue(job) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ job, resolve, reject });
        scheduled ??= setImmediate(flushNow);
      });
    },
    flushNow,
  };
}
