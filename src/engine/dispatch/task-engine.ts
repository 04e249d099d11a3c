/**
 * The task engine: dispatcher, poller, settler and expirer wired to one store. In the embedded
 * deployment one engine owns every task. Wiring only: when tasks are dispatched lives in the
 * dispatch schedule (dispatch-schedule.ts), taking over the tasks of gained partitions in
 * adoption.ts, following tasks upstream in the poller (poller.ts).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KnownTask } from '../../domain/task.js';
import type { ChannelHealth } from '../channels/channel-health.js';
import { SUBMIT_LEASE_SECONDS } from './dispatcher.js';
import { taskIdOfStream } from '../../domain/events.js';
import { createDispatchSchedule } from './dispatch-schedule.js';
import { createAdoption } from './adoption.js';
import { createExpirer, type Expirer } from '../upkeep/expirer.js';
import { createDeadlineSweeper } from '../upkeep/deadline-sweeper.js';
import { deleteInputsOfEndedTask } from '../upkeep/input-cleanup.js';
import { createPoller, type Poller, type PollerDeps } from './poller.js';
import { createProcessor, type Processor, type ProcessorOptions } from '../upkeep/processor.js';
import { createOwnedProcessor, type OwnedProcessor } from './owned-processor.js';
import { periodicProcess } from '../upkeep/periodic.js';
import { startAll, stopAll, type BackgroundProcess } from '../../lib/background.js';
import { settleTask } from '../upkeep/settler.js';
import { createSubmitLeaseMemory, type SubmitWindowCounts } from './submit-lease-memory.js';
import type { Ownership } from './ownership.js';
import type { RequestDeps } from '../tasks/request-deps.js';

export interface TaskEngineDeps extends PollerDeps, Pick<RequestDeps, 'views' | 'accounts' | 'signer'> {
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

export function createTaskEngine(deps: TaskEngineDeps): TaskEngine {
  const poller = createPoller({ ...deps, log: deps.log.child({ processor: 'poller' }) });
  /** Processors that follow partitions: told of each assignment and revocation. */
  const followers: OwnedProcessor[] = [];
  /** A processor of task events: scoped to owned partitions where instances split the work. */
  function taskProcessor(options: Pick<ProcessorOptions, 'name' | 'log' | 'handles'> & { handle: NonNullable<ProcessorOptions['handle']> }): Processor {
    const o = { ...options, events: deps.events, views: deps.views, clock: deps.clock, streamPrefixes: ['task-'], concurrency: 64 };
    if (!deps.partitioned) return createProcessor(o);
    const p = createOwnedProcessor({ ...o, ownership: deps.ownership, partitionOf: (e) => deps.ownership.partitionOf(taskIdOfStream(e.streamName)) });
    followers.push(p);
    return p;
  }
  /** This engine's share of the sweeps' work: its partitions' tasks, or every task when it is the only engine. */
  const mine = (taskId: string) => !deps.partitioned || deps.ownership.owns(taskId);
  const owns = (taskId: string) => deps.ownership.owns(taskId);
  const dispatcherLog = deps.log.child({ processor: 'dispatcher' });
  // Answers held unrecorded and claims watched live as long as this engine (one per process).
  const leases = createSubmitLeaseMemory({ leaseMs: SUBMIT_LEASE_SECONDS * 1000 });
  const schedule = createDispatchSchedule({
    views: deps.views,
    clock: deps.clock,
    log: dispatcherLog,
    concurrency: deps.channelConcurrency,
    owns,
    dispatcher: {
      ...deps,
      // Owner of this engine's submit leases: readable in the event log (host, process), unique per start.
      instanceId: deps.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
      log: dispatcherLog,
      leases,
      onDispatched: (t: KnownTask) => owns(t.taskId) && poller.track(t),
      owns,
      reservationOpen: (accountId: string, reservationId: string) => deps.accounts.hasOpenReservation(accountId, reservationId),
    },
  });
  const dispatcher = taskProcessor({
    name: 'dispatcher',
    log: dispatcherLog,
    handles: ['TaskSubmitted'],
    handle: async (event) => {
      // A synchronous call runs in its request and is never dispatched: known from the event
      // itself, without the read of its stream that dispatchTask would make to find it out.
      if (event.type === 'TaskSubmitted' && event.data.sync === true) return;
      const taskId = taskIdOfStream(event.streamName);
      // Another instance owns this task; if ownership moves here, the in-flight view brings it back.
      if (!owns(taskId)) return;
      // Not awaited: a slow upstream must not hold up the tasks behind it. A dispatch lost to a
      // crash is found again on start (the task is still `submitted` in the in-flight view).
      schedule.dispatch(taskId);
    },
  });
  const adoption = createAdoption({ ...deps, dispatch: (taskId) => schedule.dispatch(taskId), track: (task) => poller.track(task) });
  // Where instances split the work, each settles (and cleans up after) its own partitions' tasks
  // only: a partition that moves is resumed from its checkpoint by its new owner.
  const settler = taskProcessor({
    name: 'settler',
    log: deps.log.child({ processor: 'settler' }),
    handles: ['TaskSucceeded', 'TaskFailed'],
    handle: async (event) => {
      await settleTask(deps, event);
      // The task has ended: its stored inputs are no longer needed (input-cleanup.ts).
      await deleteInputsOfEndedTask(deps, event);
    },
  });
  const expirer = createExpirer({ ...deps, owns: mine, log: deps.log.child({ processor: 'expirer' }) });
  const deadlines = createDeadlineSweeper({ ...deps, log: deps.log.child({ processor: 'deadlines' }) });

  /** Ownership of partitions, adoption of their unfinished tasks, and their polling. */
  const polling: BackgroundProcess = {
    name: 'poller',
    // Adoption done and every poll since then answered (or nothing to poll).
    lastPass: () => latest(adoption.adoptedAt(), poller.lastPoll()),
    // In /readyz: which task partitions this instance works on.
    detail: () => ({ partitions: deps.ownership.partitions() }),
    async start() {
      // Unfinished tasks of the partitions this instance owns (all of them on the embedded
      // default) are adopted on assignment: after a restart, or when another instance left.
      await deps.ownership.start({
        onAssign: async (partitions) => {
          await Promise.all([...followers.map((p) => p.assigned(partitions)), adoption.adopt(partitions)]);
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
      schedule.halt();
      adoption.stop();
      await dispatcher.stop();
      await schedule.drain();
    },
  };
  // Start order; stopped in reverse.
  const processes: readonly BackgroundProcess[] = [
    settler,
    polling,
    dispatch,
    periodicProcess(schedule.redispatcher, 30_000),
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
