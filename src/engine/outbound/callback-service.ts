/**
 * Wires completion callbacks: a consumer group on the task-events topic schedules them (see
 * callback-consumer.ts) where the bus is Kafka, a processor over the event store
 * (callback-log-scheduler.ts) where it is in process; the deliverer posts them through the
 * outbound guard (no trusted origin; loopback and operator-allowed destinations only as configured).
 */
import type { Bus } from '../../ports/bus.js';
import type { BackgroundProcess } from '../../lib/background.js';
import { createCallbackConsumer } from './callback-consumer.js';
import { createCallbackLogScheduler } from './callback-log-scheduler.js';
import { createCallbackDeliverer, type CallbackDeps } from './callbacks.js';
import type { AllowedDestinations } from '../../config/allowed-destinations.js';
import { callbackPolicy, guardedPost } from './outbound-guard.js';
import { periodicProcess, type Periodic } from '../upkeep/periodic.js';

export interface CallbackService {
  scheduler: BackgroundProcess;
  deliverer: Periodic;
  /** Both as background processes of the role, in start order (the role's list includes them). */
  processes: readonly BackgroundProcess[];
}

/** What the deliverer needs but the post (the service posts through the outbound guard), and what the scheduler adds. */
export interface CallbackServiceDeps extends Omit<CallbackDeps, 'post'> {
  config: { allowLoopbackOutbound: boolean; callbackAllowedDestinations?: AllowedDestinations };
  bus: Bus;
  /** Where final task events are read: the bus's task-events topic, or the event store itself (an in-process bus). */
  scheduleFrom: 'bus' | 'log';
  /** Milliseconds between the deliverer's passes. */
  checkMs: number;
}

export function createCallbackService(deps: CallbackServiceDeps): CallbackService {
  const log = deps.log.child({ processor: 'callbacks' });
  const scheduler = deps.scheduleFrom === 'bus' ? createCallbackConsumer({ ...deps, log }) : createCallbackLogScheduler({ ...deps, log });
  const policy = callbackPolicy(deps.config, { timeoutMs: deps.timeoutMs });
  const deliverer = createCallbackDeliverer({ ...deps, log, post: (url, body, headers) => guardedPost(url, body, headers, policy) });
  return { scheduler, deliverer, processes: [scheduler, periodicProcess(deliverer, deps.checkMs)] };
}
