/**
 * The callback scheduler where the bus is in process (the embedded default): a checkpointed
 * processor over the task streams of the event store itself. A final task event schedules the
 * task's callback (`scheduleCallbackFor`: one `CallbackScheduled` per task, so an event handled
 * twice schedules once), naming the event's revision: the body is the task as of that event.
 *
 * Nobody outside the process can read an in-process bus, so on the embedded default nothing is
 * published to one: each event is written once, to the event store, and this processor reads it
 * there (docs/decisions/0144-one-durable-copy-of-each-event.md). With Kafka the consumer group
 * on the task-events topic (callback-consumer.ts) schedules instead, split by partition.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import { taskIdOfStream } from '../../domain/events.js';
import { createProcessor, type Processor } from '../upkeep/processor.js';
import { scheduleCallbackFor } from './callbacks.js';

export function createCallbackLogScheduler(deps: { events: EventStore; views: ViewStore; clock: () => Date; log: Logger }): Processor {
  return createProcessor({
    name: 'callback-scheduler',
    events: deps.events,
    views: deps.views,
    log: deps.log,
    handles: ['TaskSucceeded', 'TaskFailed'],
    streamPrefixes: ['task-'],
    clock: deps.clock,
    // Tasks are independent: their schedules may be appended side by side.
    concurrency: 16,
    // A data directory that ran the bus-fed scheduler before has no checkpoint of this one: from
    // the beginning, where every task already scheduled is found so and skipped.
    startAt: 'beginning',
    handle: (event) => scheduleCallbackFor(deps, taskIdOfStream(event.streamName), event.id, event.revision),
  });
}
