/**
 * Group commit: jobs enqueued in the same tick are handed to `runBatch` together on
 * setImmediate, so one transaction (one fsync) commits all of them. `runBatch` settles each job
 * on its own; if it throws (the commit itself failed), every job of the batch is rejected.
 */
import { settleGroup, type JobOutcome, type PendingJob } from '../job-outcome.js';

export interface GroupCommit<J, R> {
  enqueue(job: J): Promise<R>;
  /** Runs whatever is queued now, synchronously (used before closing). */
  flushNow(): void;
}

export function createGroupCommit<J, R>(runBatch: (jobs: readonly J[]) => JobOutcome<R>[]): GroupCommit<J, R> {
  let queue: PendingJob<J, R>[] = [];
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
    settleGroup(batch, outcomes);
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
