/**
 * The task engine: dispatcher, poller, settler and expirer wired to one store. In the embedded
 * deployment one engine owns every task.
 */
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { InflightDoc } from '../../../projections/inflight.js';
import type { KnownTask } from '../../domain/task.js';
import type { AccountService } from '../accounts/account-service.js';
import type { AssetSigner } from '../media/assets.js';
import type { Catalog } from '../channels/catalog.js';
import type { ChannelHealth } from '../channels/channel-health.js';
import { dispatchTask, SUBMIT_LEASE_SECONDS } from './dispatcher.js';
import { createExpirer, type Expirer } from '../upkeep/expirer.js';
import { createDeadlineSweeper } from '../upkeep/deadline-sweeper.js';
import { deleteInputsOfEndedTask } from '../upkeep/input-cleanup.js';
import { createPoller, loadTracked, type Poller } from './poller.js';
import { createProcessor, type Processor, type ProcessorOptions } from '../upkeep/processor.js';
import { createOwnedProcessor, type OwnedProcessor } from './owned-processor.js';
import { Semaphore } from '../../lib/semaphore.js';
import { periodic, periodicProcess } from '../upkeep/periodic.js';
import { startAll, stopAll, type BackgroundProcess } from '../upkeep/background.js';
import { settleTask } from '../upkeep/settler.js';
import { createSubmitLeaseMemory, type SubmitWindowCounts } from './submit-lease-memory.js';
import type { UpstreamRegistry } from '../channels/upstream.js';
import type { Ownership } from './ownership.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import { retry, type Backoff } from '../../lib/backoff.js';
import { taskIdOfStream } from '../../domain/events.js';

export interface TaskEngineDeps {
  events: EventStore;
  views: ViewStore;
  assets: AssetStore;
  accounts: AccountService;
  catalog: Catalog;
  signer: AssetSigner;
  upstreams: UpstreamRegistry;
  log: Logger;
  clock: () => Date;
  selfUrl: () => string;
  assetRetentionSeconds: number;
  pollIntervalMs?: number;
  maxAgeSeconds?: number;
  channelConcurrency: number;
  expiryCheckMs?: number;
  ownership: Ownership;
  /**
   * Instances split the work by bus partition (the distributed deployment): the settler and the
   * dispatcher handle only the events of owned partitions, with a checkpoint per partition
   * (owned-processor.ts), and the expirer only owned tasks. Default false: this engine is the
   * only one (the embedded default) and keeps one checkpoint per processor, as it always has.
   */
  partitioned?: boolean;
  /**
   * Owner of this engine's submit leases. Default: unique per start (host, pid, random), as
   * instances of the distributed deployment need. Where only one process can ever work on the
   * data (the embedded bus), a stable id lets a restart take over the leases of the process it
   * replaces at once instead of waiting them out.
   */
  instanceId?: string;
  outbound: (channelBaseUrl: string) => OutboundPolicy;
  /** Resolves once the views show everything written so far (before reading the in-flight set). */
  viewsReachHead: () => Promise<void>;
  /** Circuit breakers per channel (channel-health.ts): the dispatcher skips open channels. */
  channelHealth?: ChannelHealth;
}

export interface TaskEngine {
  poller: Poller;
  dispatcher: Processor;
  settler: Processor;
  expirer: Expirer;
  /** The second upstream jobs this engine may have caused, counted since its start (submit-lease-memory.ts). */
  submitWindow(): Readonly<SubmitWindowCounts>;
  /** The engine's background processes in start order (the role's list includes them). */
  processes: readonly BackgroundProcess[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Between tries of one dispatch (a store that failed to answer): 200 ms doubling. */
const DISPATCH_RETRY: Backoff = { initialMs: 200 };
/** Between tries of adopting a partition's tasks: 500 ms doubling, at most 30 s. */
const ADOPT_RETRY: Backoff = { initialMs: 500, maxMs: 30_000 };

/** Looking again at a task another instance is submitting: after 1 s, doubling up to 15 s. */
const LOOK_AGAIN_FIRST_MS = 1000;
const LOOK_AGAIN_MAX_MS = 15_000;

export function createTaskEngine(deps: TaskEngineDeps): TaskEngine {
  const poller = createPoller({ ...deps, log: deps.log.child({ processor: 'poller' }) });
  /** Processors that follow partitions: told of each assignment and revocation. */
  const followers: OwnedProcessor[] = [];
  /** A processor of task events: scoped to owned partitions where instances split the work. */
  function taskProcessor(o: ProcessorOptions & { handle: NonNullable<ProcessorOptions['handle']> }): Processor {
    if (!deps.partitioned) return createProcessor(o);
    const p = createOwnedProcessor({ ...o, ownership: deps.ownership, partitionOf: (e) => deps.ownership.partitionOf(taskIdOfStream(e.streamName)) });
    followers.push(p);
    return p;
  }
  /** This engine's share of the sweeps' work: its partitions' tasks, or every task when it is the only engine. */
  const mine = (taskId: string) => !deps.partitioned || deps.ownership.owns(taskId);
  const dispatcherLog = deps.log.child({ processor: 'dispatcher' });
  const dispatcher = taskProcessor({
    name: 'dispatcher',
    events: deps.events,
    views: deps.views,
    log: dispatcherLog,
    handles: ['TaskSubmitted'],
    streamPrefixes: ['task-'],
    concurrency: 64,
    handle: async (event) => {
      const taskId = taskIdOfStream(event.streamName);
      // Another instance owns this task; if ownership moves here, the in-flight view brings it back.
      if (!deps.ownership.owns(taskId)) return;
      // Not awaited: a slow upstream must not hold up the tasks behind it. A dispatch lost to a
      // crash is found again on start (the task is still `submitted` in the in-flight view).
      dispatchInBackground(taskId);
    },
  });
  const dispatchLimit = new Semaphore(deps.channelConcurrency);
  const dispatching = new Set<Promise<void>>();
  const dispatchingIds = new Set<string>();
  function dispatchInBackground(taskId: string): void {
    if (dispatchingIds.has(taskId)) return;
    dispatchingIds.add(taskId);
    const work = dispatchLimit.run(async () => {
      // Waited for a slot: the partition may have moved meanwhile (revoked work stops here; the
      // submit lease covers a dispatch that had already begun).
      if (!deps.ownership.owns(taskId)) return;
      // Five tries in all (200 ms doubling between them); no further try once the engine is stopping.
      return retry(() => dispatchTask(dispatcherDeps, taskId), { backoff: DISPATCH_RETRY, retryIf: (_err, attempt) => attempt < 4 && !stopping });
    });
    const tracked = work.catch((err: unknown) => dispatcherLog.error({ err, taskId }, 'dispatch failed; the task is picked up again on the next start'));
    dispatching.add(tracked);
    void tracked.finally(() => {
      dispatching.delete(tracked);
      dispatchingIds.delete(taskId);
    });
  }

  /** Tasks still waiting for a dispatch a minute after submit (their dispatch failed): again. */
  const redispatcher = periodic('redispatch', dispatcherLog, async () => {
    const cutoff = Math.floor(deps.clock().getTime() / 1000) - 60;
    const waiting = await deps.views.find<InflightDoc>('inflight', { stage: 'submitted', sync: false }, { sortBy: 'createdAt', limit: 1000 });
    let again = 0;
    for (const { doc } of waiting) {
      if (doc.createdAt > cutoff) break;
      if (!deps.ownership.owns(doc.taskId) || dispatchingIds.has(doc.taskId)) continue;
      dispatchInBackground(doc.taskId);
      again++;
    }
    return again;
  });
  let stopping = false;
  /** Aborted when the engine stops: waits between adoption tries end at once. */
  const stopped = new AbortController();
  // Owner of this engine's submit leases: readable in the event log (host, process), unique per start.
  const instanceId = deps.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
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
  const onClaimedElsewhere = (taskId: string, untilExpiry: number) => {
    if (stopping) return;
    const n = looks.get(taskId) ?? 0;
    looks.set(taskId, n + 1);
    const timer = setTimeout(
      () => {
        lookAgain.delete(timer);
        if (!stopping && deps.ownership.owns(taskId)) dispatchInBackground(taskId);
      },
      Math.max(50, Math.min(LOOK_AGAIN_FIRST_MS * 2 ** n, LOOK_AGAIN_MAX_MS, untilExpiry)),
    );
    lookAgain.add(timer);
  };
  // Answers held unrecorded and claims watched live as long as this engine (one per process).
  const leases = createSubmitLeaseMemory({ leaseMs: SUBMIT_LEASE_SECONDS * 1000 });
  const dispatcherDeps = {
    ...deps,
    instanceId,
    log: dispatcherLog,
    leases,
    onDispatched: (t: KnownTask, revision: number) => deps.ownership.owns(t.taskId) && poller.track(t, revision),
    onClaimedElsewhere,
    owns: (taskId: string) => deps.ownership.owns(taskId),
    reservationOpen: (accountId: string, reservationId: string) => deps.accounts.hasOpenReservation(accountId, reservationId),
  };

  /** Takes over the unfinished tasks of newly owned partitions. */
  async function adopt(partitions: readonly number[]): Promise<void> {
    const mine = new Set(partitions);
    await deps.viewsReachHead();
    // Revoked while the views caught up: abandoned, the partitions' new owner adopts them.
    if (!partitions.some((p) => deps.ownership.ownsPartition(p))) return;
    const inflight = await deps.views.find<InflightDoc>('inflight', { sync: false }, { limit: 10_000_000 });
    for (const { doc } of inflight) {
      // `owns` as well: a partition revoked while this adoption runs is not adopted further.
      if (!mine.has(deps.ownership.partitionOf(doc.taskId)) || !deps.ownership.owns(doc.taskId)) continue;
      try {
        if (doc.stage === 'submitted') dispatchInBackground(doc.taskId);
        else {
          const task = await loadTracked(deps.events, doc.taskId);
          // Revoked while it was read (the revoke already untracked what it had): not tracked after it.
          if (task && task.status !== 'submitted' && deps.ownership.owns(doc.taskId)) poller.track(task);
        }
      } catch (err) {
        deps.log.error({ err, taskId: doc.taskId }, 'adopting a task failed');
      }
    }
  }
  // Where instances split the work, each settles (and cleans up after) its own partitions' tasks
  // only: a partition that moves is resumed from its checkpoint by its new owner.
  const settler = taskProcessor({
    name: 'settler',
    events: deps.events,
    views: deps.views,
    log: deps.log.child({ processor: 'settler' }),
    handles: ['TaskSucceeded', 'TaskFailed'],
    streamPrefixes: ['task-'],
    concurrency: 64,
    handle: async (event) => {
      await settleTask(deps, event);
      // The task has ended: its stored inputs are no longer needed (input-cleanup.ts).
      await deleteInputsOfEndedTask(deps, event);
    },
  });
  const expirer = createExpirer({ ...deps, owns: mine, log: deps.log.child({ processor: 'expirer' }) });
  const deadlines = createDeadlineSweeper({ ...deps, log: deps.log.child({ processor: 'deadlines' }) });

  let adoptedAt: Date | undefined;
  /**
   * Adoption that fails (a store that does not answer, views that lag) is tried again with
   * backoff while this instance still owns any of the partitions: their tasks have nobody else.
   */
  async function adoptUntilDone(partitions: readonly number[]): Promise<void> {
    await retry(
      async (attempt) => {
        // After a wait: given up when stopping or when none of the partitions is owned any more.
        if (attempt > 0 && (stopping || !partitions.some((p) => deps.ownership.ownsPartition(p)))) return;
        await adopt(partitions);
        adoptedAt = new Date();
      },
      {
        backoff: ADOPT_RETRY,
        signal: stopped.signal,
        onRetry: (err, attempt) => deps.log.error({ err, attempt }, 'adopting in-flight tasks failed; trying again'),
      },
    ).catch((err: unknown) => {
      if (!stopped.signal.aborted) throw err;
    });
  }
  /** Ownership of partitions, adoption of their unfinished tasks, and their polling. */
  const polling: BackgroundProcess = {
    name: 'poller',
    // Adoption done and every poll since then answered (or nothing to poll).
    lastPass: () => latest(adoptedAt, poller.lastPoll()),
    async start() {
      // Unfinished tasks of the partitions this instance owns (all of them on the embedded
      // default) are adopted on assignment: after a restart, or when another instance left.
      await deps.ownership.start({
        onAssign: async (partitions) => {
          await Promise.all([...followers.map((p) => p.assigned(partitions)), adoptUntilDone(partitions)]);
        },
        onRevoke: (partitions) => {
          for (const p of followers) p.revoked(partitions);
          const lost = new Set(partitions);
          poller.untrackWhere((taskId) => lost.has(deps.ownership.partitionOf(taskId)));
        },
      });
    },
    async stop() {
      await poller.stop();
      await deps.ownership.stop();
    },
  };
  const dispatch: BackgroundProcess = {
    name: 'dispatcher',
    lastPass: () => dispatcher.lastPass(),
    start: () => dispatcher.start(),
    async stop() {
      // Graceful: finish dispatches in progress before ownership is given up (the poller
      // stops after this), so another instance adopts only what is really in flight. A crash
      // skips this: another instance then watches the dead one's submit lease for a whole lease
      // before it may submit (dispatcher.ts, SUBMIT_LEASE_SECONDS), with the same client
      // reference: the one window for a second upstream job.
      stopping = true;
      stopped.abort(new Error('the task engine is stopping'));
      for (const timer of lookAgain) clearTimeout(timer);
      lookAgain.clear();
      await dispatcher.stop();
      await Promise.allSettled([...dispatching]);
    },
  };
  // Start order; stopped in reverse.
  const processes: readonly BackgroundProcess[] = [
    settler,
    polling,
    dispatch,
    periodicProcess(redispatcher, 30_000),
    periodicProcess(expirer, deps.expiryCheckMs ?? 1000),
    periodicProcess(deadlines, deadlines.intervalMs),
  ];

  return {
    poller,
    dispatcher,
    settler,
    expirer,
    submitWindow: () => leases.counts,
    processes,
    start: () => startAll(processes),
    stop: () => stopAll(processes),
  };
}

function latest(a: Date | undefined, b: Date | undefined): Date | undefined {
  if (!a) return undefined;
  return b && b > a ? b : a;
}
