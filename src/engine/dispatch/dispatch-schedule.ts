/**
 * The dispatch schedule: when this engine dispatches a task, and when it tries again. A task is
 * dispatched in the background (a slow upstream must not hold up the tasks behind it), once at a
 * time per task and at most `concurrency` at once in all; a dispatch whose store did not answer
 * is tried again with backoff; a task whose submit lease another instance holds is looked at
 * again later; and a task still waiting for its dispatch a minute after submit (its dispatch
 * failed, or was lost with a crash) is dispatched again by a periodic sweep.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { ViewStore } from '../../ports/view-store.js';
import type { InflightDoc } from '../../../projections/inflight.js';
import { retry, type Backoff } from '../../lib/backoff.js';
import { StoreUnavailableError } from '../../ports/store-unavailable.js';
import { periodic, type Periodic } from '../upkeep/periodic.js';
import { dispatchTask, type DispatcherDeps } from './dispatcher.js';
import { nowSeconds } from '../../lib/time.js';

export interface DispatchScheduleDeps {
  views: ViewStore;
  clock: () => Date;
  log: Logger;
  /** Dispatches under way at once, in all. */
  concurrency: number;
  /** Whether this instance owns the task's partition: a task it does not own is not dispatched here. */
  owns(taskId: string): boolean;
  /** What a dispatch needs; the schedule answers `onClaimedElsewhere` itself (it looks again). */
  dispatcher: Omit<DispatcherDeps, 'onClaimedElsewhere'>;
}

export interface DispatchSchedule {
  /** Dispatches the task in the background, unless it is being dispatched already. */
  dispatch(taskId: string): void;
  /** The periodic sweep that dispatches again what still waits a minute after submit. */
  redispatcher: Periodic;
  /** The engine is stopping: no further try, no further look again (dispatches under way go on). */
  halt(): void;
  /** Resolves once every dispatch under way has ended. */
  drain(): Promise<void>;
}

/** Between tries of one dispatch (a store that failed to answer): 200 ms doubling, at most 5 s. */
const DISPATCH_RETRY: Backoff = { initialMs: 200, maxMs: 5000 };

/** Looking again at a task another instance is submitting: after 1 s, doubling up to 15 s. */
const LOOK_AGAIN_FIRST_MS = 1000;
const LOOK_AGAIN_MAX_MS = 15_000;

export function createDispatchSchedule(deps: DispatchScheduleDeps): DispatchSchedule {
  /**
   * Tasks waiting for a slot, oldest first, as ids only: the bus hands the dispatcher every
   * submit at once, and a backlog of 100,000 must not hold a promise, closure and semaphore
   * waiter each (about 1 KB a task). `head` is the next to start; the array is compacted as it drains.
   */
  let queue: string[] = [];
  let head = 0;
  /** The dispatches under way (at most `concurrency`). */
  const running = new Set<Promise<void>>();
  /** Queued or under way: a task is dispatched once at a time. */
  const dispatchingIds = new Set<string>();
  let stopping = false;

  function dispatch(taskId: string): void {
    if (stopping || dispatchingIds.has(taskId)) return;
    dispatchingIds.add(taskId);
    queue.push(taskId);
    startWhatFits();
  }

  function startWhatFits(): void {
    while (running.size < deps.concurrency && head < queue.length) {
      start(queue[head++]!);
      if (head === queue.length) [queue, head] = [[], 0];
      else if (head >= 1024 && head * 2 >= queue.length) [queue, head] = [queue.slice(head), 0];
    }
  }

  function start(taskId: string): void {
    const work = (async () => {
      // Waited for a slot: the partition may have moved meanwhile (revoked work stops here; the
      // submit lease covers a dispatch that had already begun).
      if (stopping || !deps.owns(taskId)) return;
      // Five tries in all (200 ms doubling between them); no further try once the engine is
      // stopping. A store that cannot be reached (a restart, a failover) is waited for while the
      // task stays this instance's: five tries would end within 3 s, and the task would wait for
      // the redispatch sweep, a minute after its submit.
      return retry(() => dispatchTask(dispatcherDeps, taskId), {
        backoff: DISPATCH_RETRY,
        retryIf: (err, attempt) => !stopping && (err instanceof StoreUnavailableError ? deps.owns(taskId) : attempt < 4),
      });
    })();
    const ended: Promise<void> = work
      .catch((err: unknown) => deps.log.error({ err, taskId }, 'dispatch failed; the task is picked up again on the next start'))
      .then(() => {
        running.delete(ended);
        dispatchingIds.delete(taskId);
        startWhatFits();
      });
    running.add(ended);
  }

  /**
   * Tasks whose submit lease another instance holds are looked at again until the submit is
   * recorded (then followed here, as the holder may have left with its partition) or this
   * instance has watched the claim open for a whole lease (then claimed here): after a second at
   * first, then less often (a holder that has not recorded within seconds is stalled, and its
   * lease can be taken over only once it has been watched for a whole lease), never past the
   * moment the watch ends.
   */
  const lookAgain = new Set<NodeJS.Timeout>();
  const looks = new LRUCache<string, number>({ max: 10_000 });
  function onClaimedElsewhere(taskId: string, untilExpiry: number): void {
    if (stopping) return;
    const n = looks.get(taskId) ?? 0;
    looks.set(taskId, n + 1);
    const timer = setTimeout(
      () => {
        lookAgain.delete(timer);
        if (!stopping && deps.owns(taskId)) dispatch(taskId);
      },
      Math.max(50, Math.min(LOOK_AGAIN_FIRST_MS * 2 ** n, LOOK_AGAIN_MAX_MS, untilExpiry)),
    );
    lookAgain.add(timer);
  }
  const dispatcherDeps: DispatcherDeps = { ...deps.dispatcher, onClaimedElsewhere };

  /** Tasks still waiting for a dispatch a minute after submit (their dispatch failed): again. */
  const redispatcher = periodic('redispatch', deps.log, async () => {
    const cutoff = nowSeconds(deps.clock) - 60;
    const waiting = await deps.views.find<InflightDoc>('inflight', { stage: 'submitted', sync: false }, { sortBy: 'createdAt', limit: 1000 });
    let again = 0;
    for (const { doc } of waiting) {
      if (doc.createdAt > cutoff) break;
      if (!deps.owns(doc.taskId) || dispatchingIds.has(doc.taskId)) continue;
      dispatch(doc.taskId);
      again++;
    }
    return again;
  });

  return {
    dispatch,
    redispatcher,
    halt() {
      stopping = true;
      // The queued dispatches do not begin: their tasks stay `submitted` for the next start's
      // adoption, so a stop with a backlog is as quick as with none.
      for (const taskId of queue.slice(head)) dispatchingIds.delete(taskId);
      [queue, head] = [[], 0];
      for (const timer of lookAgain) clearTimeout(timer);
      lookAgain.clear();
    },
    drain: async () => void (await Promise.allSettled([...running])),
  };
}
