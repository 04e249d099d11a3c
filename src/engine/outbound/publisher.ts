/**
 * Publisher: forwards task and billing events to the bus (task events keyed by task id,
 * billing events by account id), in store order, checkpointing after the send — at-least-once;
 * consumers dedupe by event id.
 */
import type { Logger } from 'pino';
import type { Bus, BusMessage } from '../../ports/bus.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import { BILLING_TOPIC, envelopeOf, TASK_TOPIC } from './event-envelope.js';
import { createProcessor, type Processor } from '../upkeep/processor.js';
import { eventSchemas, type EventType } from '../../domain/events.js';

export function createPublisher(deps: { events: EventStore; views: ViewStore; bus: Bus; clock: () => Date; log: Logger }): Processor {
  return createProcessor({
    name: 'publisher',
    events: deps.events,
    views: deps.views,
    log: deps.log.child({ processor: 'publisher' }),
    handles: Object.keys(eventSchemas) as EventType[],
    streamPrefixes: ['task-', 'callback-', 'account-'],
    clock: deps.clock,
    async handleBatch(events) {
      const byTopic = new Map<string, BusMessage[]>([
        [TASK_TOPIC, []],
        [BILLING_TOPIC, []],
      ]);
      for (const e of events) {
        const envelope = envelopeOf(e);
        if (envelope)
          byTopic.get(envelope.topic)!.push({ id: envelope.id, key: envelope.key, value: JSON.stringify(envelope), headers: { type: envelope.type } });
      }
      for (const [topic, messages] of byTopic) if (messages.length > 0) await deps.bus.publish(topic, messages);
    },
  });
}
