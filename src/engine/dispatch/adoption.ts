/**
 * Adoption: the unfinished tasks of partitions this instance gains (on start, or when another
 * instance left) are taken over from the in-flight view: a task still waiting for its submit is
 * dispatched again, one running upstream is followed by the poller. An adoption that fails (a
 * store that does not answer, views that lag) is tried again with backoff while this instance
 * still owns any of the partitions: their tasks have nobody else.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { InflightDoc } from '../../../projections/inflight.js';
import type { KnownTask } from '../../domain/task.js';
import { readTask } from '../commands/task-commands.js';
import { retry, type Backoff } from '../../lib/backoff.js';
import type { Ownership } from './ownership.js';

export interface AdoptionDeps {
  events: EventStore;
  views: ViewStore;
  log: Logger;
  clock: () => Date;
  ownership: Pick<Ownership, 'owns' | 'ownsPartition' | 'partitionOf'>;
  /** Resolves once the views show everything written so far (before reading the in-flight set). */
  viewsReachHead: () => Promise<void>;
  /** A task still waiting for its submit: dispatched (again). */
  dispatch(taskId: string): void;
  /** A task running upstream: followed. */
  track(task: KnownTask): void;
}

export interface Adoption {
  /** Takes over the unfinished tasks of newly owned partitions, trying again until done, the partitions lost or a stop. */
  adopt(partitions: readonly number[]): Promise<void>;
  /** When an adoption last completed. */
  adoptedAt(): Date | undefined;
  /** The engine is stopping: a wait between tries ends at once, and no further try starts. */
  stop(): void;
}

/** Between tries of adopting a partition's tasks: 500 ms doubling, at most 30 s. */
const ADOPT_RETRY: Backoff = { initialMs: 500, maxMs: 30_000 };

export function createAdoption(deps: AdoptionDeps): Adoption {
  const { ownership } = deps;
  const stopped = new AbortController();
  let adoptedAt: Date | undefined;

  async function adoptOnce(partitions: readonly number[]): Promise<void> {
    const mine = new Set(partitions);
    await deps.viewsReachHead();
    // Revoked while the views caught up: abandoned, the partitions' new owner adopts them.
    if (!partitions.some((p) => ownership.ownsPartition(p))) return;
    const inflight = await deps.views.find<InflightDoc>('inflight', { sync: false }, { limit: 10_000_000 });
    for (const { doc } of inflight) {
      // `owns` as well: a partition revoked while this adoption runs is not adopted further.
      if (!mine.has(ownership.partitionOf(doc.taskId)) || !ownership.owns(doc.taskId)) continue;
      try {
        if (doc.stage === 'submitted') deps.dispatch(doc.taskId);
        else {
          const { state: task } = await readTask(deps.events, doc.taskId);
          // Revoked while it was read (the revoke already untracked what it had): not tracked after it.
          if (task.status !== 'none' && !task.final && task.status !== 'submitted' && ownership.owns(doc.taskId)) deps.track(task);
        }
      } catch (err) {
        deps.log.error({ err, taskId: doc.taskId }, 'adopting a task failed');
      }
    }
  }

  return {
    async adopt(partitions) {
      await retry(
        async (attempt) => {
          // After a wait: given up when stopping or when none of the partitions is owned any more.
          if (attempt > 0 && (stopped.signal.aborted || !partitions.some((p) => ownership.ownsPartition(p)))) return;
          await adoptOnce(partitions);
          adoptedAt = deps.clock();
        },
        {
          backoff: ADOPT_RETRY,
          signal: stopped.signal,
          onRetry: (err, attempt) => deps.log.error({ err, attempt }, 'adopting in-flight tasks failed; trying again'),
        },
      ).catch((err: unknown) => {
        if (!stopped.signal.aborted) throw err;
      });
    },
    adoptedAt: () => adoptedAt,
    stop: () => stopped.abort(new Error('the task engine is stopping')),
  };
}
