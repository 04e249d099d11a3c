import type { EventMetadata, RecordedEvent } from '../ports/event-store.js';
import { parseEvent, type DomainEvent } from './events.js';

/** A catalog event as it was stored: the typed event plus where it stands. */
export type RecordedDomainEvent = DomainEvent &
  Readonly<{ id: string; streamName: string; revision: number; position: bigint; metadata: EventMetadata }>;

/** Types a stored event against the catalog; undefined for an unknown type or invalid data. */
export function toDomainEvent(event: RecordedEvent): RecordedDomainEvent | undefined {
  const parsed = parseEvent(event.type, event.data);
  if (!parsed) return undefined;
  return { ...parsed, id: event.id, streamName: event.streamName, revision: event.revision, position: event.position, metadata: event.metadata };
}
