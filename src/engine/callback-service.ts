/**
 * Wires completion callbacks: a checkpointed scheduler over final task events and the deliverer,
 * which posts through the outbound guard (no trusted origin, loopback only as configured).
 */
import type { Logger } from 'pino';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import { createCallbackDeliverer, scheduleCallback, type QueryBody } from './callbacks.js';
import { callbackPolicy, guardedPost, type AllowedDestinations } from './outbound-guard.js';
import type { Periodic } from './periodic.js';
import { createProcessor, type Processor } from './processor.js';

export interface CallbackService {
  scheduler: Processor;
  deliverer: Periodic;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createCallbackService(deps: {
  config: { allowLoopbackOutbound: boolean; callbackAllowedDestinations?: AllowedDestinations };
  events: EventStore;
  views: ViewStore;
  log: Logger;
  clock: () => Date;
  bodies: ReadonlyMap<string, QueryBody>;
  retryScheduleSeconds: readonly number[];
  timeoutMs: number;
  checkMs: number;
  checkUrl: (url: string) => Promise<void>;
  viewsReach: (position: bigint) => Promise<void>;
  owns?: (taskId: string) => boolean;
}): CallbackService {
  const log = deps.log.child({ processor: 'callbacks' });
  const scheduler = createProcessor({
    name: 'callback-scheduler',
    events: deps.events,
    views: deps.views,
    log,
    handles: ['TaskSucceeded', 'TaskFailed'],
    streamPrefixes: ['task-'],
    handle: (event) => scheduleCallback(deps, event),
  });
  const policy = callbackPolicy(deps.config, { timeoutMs: deps.timeoutMs });
  const deliverer = createCallbackDeliverer({ ...deps, log, post: (url, body, headers) => guardedPost(url, body, headers, policy) });
  return {
    scheduler,
    deliverer,
    async start() {
      await scheduler.start();
      deliverer.start(deps.checkMs);
    },
    async stop() {
      await scheduler.stop();
      await deliverer.stop();
    },
  };
}
