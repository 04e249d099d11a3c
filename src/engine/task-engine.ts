/**
 * The task engine: dispatcher, poller, settler and expirer wired to one store. In the embedded
 * deployment one engine owns every task.
 */
import type { Logger } from 'pino';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { InflightDoc } from '../../projections/inflight.js';
import type { AccountService } from './account-service.js';
import type { AssetSigner } from './assets.js';
import type { Catalog } from './catalog.js';
import { dispatchTask } from './dispatcher.js';
import { createExpirer, type Expirer } from './expirer.js';
import { createPoller, loadTracked, type Poller } from './poller.js';
import { createProcessor, type Processor } from './processor.js';
import { settleTask } from './settler.js';
import type { UpstreamRegistry } from './upstream.js';

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
    handle: (event) => dispatchTask({ ...deps, log: dispatcherLog, onDispatched: (t, revision) => poller.track(t, revision) }, event.streamName.slice('task-'.length)),
  });
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
      // Tasks already running upstream when the process stopped: follow them again.
      const inflight = await deps.views.find<InflightDoc>('inflight', { stage: 'dispatched' }, { limit: 1_000_000 });
      for (const { doc } of inflight) {
        const task = await loadTracked(deps.events, doc.taskId);
        if (task && task.status !== 'submitted') poller.track(task);
      }
      await settler.start();
      await dispatcher.start();
      expirer.start(deps.expiryCheckMs ?? 1000);
    },
    async stop() {
      await dispatcher.stop();
      await poller.stop();
      await settler.stop();
      await expirer.stop();
    },
  };
}
