import type { EventMetadata, RecordedEvent } from '../ports/event-store.js';
import { isEventType, type DomainEvent } from './events.js';

/** A catalog event as it was stored: the typed event plus where it stands. */
export type RecordedDomainEvent = DomainEvent & Readonly<{ id: string; streamName: string; revision: number; position: bigint; metadata: EventMetadata }>;

/**
 * Types a stored event by the catalog; undefined for a type the catalog does not know. The data
 * is not parsed again: every event was checked against its schema when it was appended
 * (engine/commands/append.ts), and reads are the hot path (projections, replays, command handlers).
 */
export function toDomainEvent(event: RecordedEvent): RecordedDomainEvent | undefined {
  if (!isEventType(event.type)) return undefined;
  return {
    type: event.type,
    data: event.data,
    id: event.id,
    streamName: event.streamName,
    revision: event.revision,
    position: event.position,
    metadata: event.metadata,
  } as RecordedDomainEvent;
}
