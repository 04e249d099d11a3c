/**
 * Group commit on a server: appends queued while a batch is being committed go together into
 * the next one, so the batch grows with the load and each costs one transaction (one lock hold,
 * one commit). One batch at a time per store: the store's write lock serialises them anyway.
 */
import type { AppendResult } from '../../ports/event-store.js';
import { settleGroup, type JobOutcome, type PendingJob } from '../job-outcome.js';
import type { AppendJob } from './append-decision.js';

/** Appends per transaction at most: bounds the statement's arrays and the lock's hold. */
const MAX_BATCH = 1000;

type Pending = PendingJob<AppendJob, AppendResult>;

export interface AppendQueue {
  enqueue(job: AppendJob): Promise<AppendResult>;
  /** Resolves once nothing is queued or being committed. */
  drained(): Promise<void>;
}

export function createAppendQueue(commit: (jobs: readonly AppendJob[]) => Promise<JobOutcome<AppendResult>[]>): AppendQueue {
  let queue: Pending[] = [];
  let running: Promise<void> | undefined;

  async function run(): Promise<void> {
    // The appends of the tick that started the batch join it.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      let outcomes: JobOutcome<AppendResult>[];
      try {
        outcomes = await commit(batch.map((pending) => pending.job));
      } catch (error) {
        // The transaction failed (or its answer was lost): every append of it fails. One that
        // did commit is absorbed when retried with the same event ids.
        for (const pending of batch) pending.reject(error);
        continue;
      }
      settleGroup(batch, outcomes);
    }
  }

  return {
    enqueue(job) {
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ job, resolve, reject });
        running ??= run().finally(() => (running = undefined));
      });
    },
    async drained() {
      while (running) await running;
    },
  };
}
