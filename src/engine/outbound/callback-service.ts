/**
 * Wires completion callbacks: a consumer group on the task-events topic schedules them (see
 * callback-consumer.ts) and the deliverer posts them through the outbound guard (no trusted
 * origin; loopback and operator-allowed destinations only as configured).
 */
import type { Logger } from 'pino';
import type { Bus } from '../../ports/bus.js';
import type { EventStore } from '../../ports/event-store.js';
import type { BackgroundProcess } from '../../lib/background.js';
import { createCallbackConsumer } from './callback-consumer.js';
import type { ViewStore } from '../../ports/view-store.js';
import { createCallbackDeliverer, type CallbackBody } from './callbacks.js';
import type { AllowedDestinations } from '../../config/allowed-destinations.js';
import { callbackPolicy, guardedPost } from './outbound-guard.js';
import { periodicProcess, type Periodic } from '../upkeep/periodic.js';

export interface CallbackService {
  scheduler: BackgroundProcess;
  deliverer: Periodic;
  /** Both as background processes of the role, in start order (the role's list includes them). */
  processes: readonly BackgroundProcess[];
}

export function createCallbackService(deps: {
  config: { allowLoopbackOutbound: boolean; callbackAllowedDestinations?: AllowedDestinations };
  events: EventStore;
  views: ViewStore;
  bus: Bus;
  log: Logger;
  clock: () => Date;
  bodies: ReadonlyMap<string, CallbackBody>;
  retryScheduleSeconds: readonly number[];
  timeoutMs: number;
  checkMs: number;
  checkUrl: (url: string) => Promise<void>;
  viewsReach: (position: bigint) => Promise<void>;
  owns?: (taskId: string) => boolean;
}): CallbackService {
  const log = deps.log.child({ processor: 'callbacks' });
  const scheduler = createCallbackConsumer({ ...deps, log });
  const policy = callbackPolicy(deps.config, { timeoutMs: deps.timeoutMs });
  const deliverer = createCallbackDeliverer({ ...deps, log, post: (url, body, headers) => guardedPost(url, body, headers, policy) });
  return { scheduler, deliverer, processes: [scheduler, periodicProcess(deliverer, deps.checkMs)] };
}
