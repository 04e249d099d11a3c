/**
 * The task engine: dispatcher, poller, settler and expirer wired to one store. In the embedded
 * deployment one engine owns every task.
 */
import type { Logger } from 'pino';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { InflightDoc } from '../../projections/inflight.js';
import type { KnownTask } from '../domain/task.js';
import type { AccountService } from './account-service.js';
import type { AssetSigner } from './assets.js';
import type { Catalog } from './catalog.js';
import { dispatchTask } from './dispatcher.js';
import { createExpirer, type Expirer } from './expirer.js';
import { createPoller, loadTracked, type Poller } from './poller.js';
import { createProcessor, type Processor } from './processor.js';
import { settleTask } from './settler.js';
import type { UpstreamRegistry } from './upstream.js';
import type { Ownership } from './ownership.js';
import type { OutboundPolicy } from './outbound-guard.js';

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
  outbound: (channelBaseUrl: string) => OutboundPolicy;
  /** Resolves once the views show everything up to `position` (before reading the in-flight set). */
  viewsReach: (position: bigint) => Promise<void>;
}

export interface TaskEngine {
  poller: Poller;
  dispatcher: Processor;
  settler: Processor;
  expirer: Expirer;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createTaskEngine(deps: TaskEngineDeps): TaskEngine {
  const poller = createPoller({ ...deps, log: deps.log.child({ processor: 'poller' }) });
  const dispatcherLog = deps.log.child({ processor: 'dispatcher' });
  const dispatcher = createProcessor({
    name: 'dispatcher',
    events: deps.events,
    views: deps.views,
    log: dispatcherLog,
    handles: ['TaskSubmitted'],
    streamPrefixes: ['task-'],
    concurrency: 64,
    handle: async (event) => {
      const taskId = event.streamName.slice('task-'.length);
      // Another instance owns this task; if ownership moves here, the in-flight view brings it back.
      if (!deps.ownership.owns(taskId)) return;
      await dispatchTask(dispatcherDeps, taskId);
    },
  });
  const dispatcherDeps = { ...deps, log: dispatcherLog, onDispatched: (t: KnownTask, revision: number) => deps.ownership.owns(t.taskId) && poller.track(t, revision) };

  /** Takes over the unfinished tasks of newly owned partitions. */
  async function adopt(partitions: readonly number[]): Promise<void> {
    const mine = new Set(partitions);
    await deps.viewsReach(await deps.events.headPosition());
    const inflight = await deps.views.find<InflightDoc>('inflight', { sync: false }, { limit: 10_000_000 });
    for (const { doc } of inflight) {
      if (!mine.has(deps.ownership.partitionOf(doc.taskId))) continue;
      try {
        if (doc.stage === 'submitted') await dispatchTask(dispatcherDeps, doc.taskId);
        else {
          const task = await loadTracked(deps.events, doc.taskId);
          if (task && task.status !== 'submitted') poller.track(task);
        }
      } catch (err) {
        deps.log.error({ err, taskId: doc.taskId }, 'adopting a task failed');
      }
    }
  }
  const settler = createProcessor({
    name: 'settler',
    events: deps.events,
    views: deps.views,
    log: deps.log.child({ processor: 'settler' }),
    handles: ['TaskSucceeded', 'TaskFailed'],
    streamPrefixes: ['task-'],
    concurrency: 64,
    handle: (event) => settleTask(deps, event),
  });
  const expirer = createExpirer({ ...deps, log: deps.log.child({ processor: 'expirer' }) });

  return {
    poller,
    dispatcher,
    settler,
    expirer,
    async start() {
      // Unfinished tasks of the partitions this instance owns (all of them on the embedded
      // default) are adopted on assignment: after a restart, or when another instance left.
      await deps.ownership.start({
        onAssign: (partitions) => adopt(partitions).catch((err: unknown) => deps.log.error({ err }, 'adopting in-flight tasks failed')),
        onRevoke: (partitions) => {
          const lost = new Set(partitions);
          poller.untrackWhere((taskId) => lost.has(deps.ownership.partitionOf(taskId)));
        },
      });
      await settler.start();
      await dispatcher.start();
      expirer.start(deps.expiryCheckMs ?? 1000);
    },
    async stop() {
      // Graceful: finish dispatches in progress, then leave the group so another instance
      // adopts what is still in flight. (A crash leaves the group without the first step: a
      // task may then be submitted upstream twice, and only one submission is recorded.)
      await dispatcher.stop();
      await poller.stop();
      await deps.ownership.stop();
      await settler.stop();
      await expirer.stop();
    },
  };
}
