/**
 * Which appends still wait for the next group commit, by the promise their caller holds: an
 * append that must follow one of them (AppendOptions.after) can then join the same batch, right
 * behind it, instead of waiting for its commit (a second fsync).
 */
import type { AppendResult } from '../../ports/event-store.js';
import type { AppendJob } from './append-batch.js';

export interface QueuedAppends {
  /** Records `append` as queued in the batch being gathered; returns it. */
  track(append: Promise<AppendResult>, job: AppendJob): Promise<AppendResult>;
  /** The job behind `append` while it waits in the batch being gathered; undefined once that batch is taken (or for another store's promise). */
  stillQueued(append: Promise<AppendResult>): AppendJob | undefined;
  /** The batch being gathered is taken for commit: whatever is queued from now on is in the next one. */
  batchTaken(): void;
}

export function createQueuedAppends(): QueuedAppends {
  // Weak: a settled append's entry goes with its promise.
  const queued = new WeakMap<Promise<AppendResult>, { job: AppendJob; batch: number }>();
  let batch = 0;
  return {
    track(append, job) {
      queued.set(append, { job, batch });
      return append;
    },
    stillQueued(append) {
      const entry = queued.get(append);
      return entry?.batch === batch ? entry.job : undefined;
    },
    batchTaken() {
      batch += 1;
    },
  };
}
