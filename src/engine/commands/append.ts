import { newEventId } from '../../domain/ids.js';
import { eventSchemas, type DomainEvent } from '../../domain/events.js';
import { jsonBytesAtMost } from '../../domain/json-bytes.js';
import { measuredAppendSize, type AppendResult, type EventMetadata, type EventStore, type ExpectedRevision, type NewEvent } from '../../ports/event-store.js';

/**
 * Wraps domain events with ids and metadata. Every event is checked against its catalog schema
 * here, once, on the way in — so readers can trust what the store gives back.
 */
export function toNewEvents(events: readonly DomainEvent[], metadata: EventMetadata, ids?: readonly string[]): NewEvent[] {
  return events.map((e, i) => ({ id: ids?.[i] ?? newEventId(), type: e.type, data: eventSchemas[e.type].parse(e.data), metadata }));
}

/**
 * Never less than appendSize(events) (ports/event-store.ts), from lengths only (jsonBytesAtMost):
 * an append under the limit by this measure is under it, without serialising its events a first
 * time only to count them (the store serialises them again to write them).
 */
export function appendSizeAtMost(events: ReadonlyArray<Pick<NewEvent, 'type' | 'data' | 'metadata'>>): number {
  return measuredAppendSize<unknown>(events, jsonBytesAtMost);
}

export function appendEvents(
  store: EventStore,
  stream: string,
  events: readonly DomainEvent[],
  options: { expectedRevision: ExpectedRevision; metadata: EventMetadata; ids?: readonly string[]; after?: Promise<AppendResult> },
): Promise<AppendResult> {
  return store.append(stream, toNewEvents(events, options.metadata, options.ids), {
    expectedRevision: options.expectedRevision,
    ...(options.after ? { after: options.after } : {}),
  });
}
