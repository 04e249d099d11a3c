/**
 * Events as JSON text, for the stores that keep them so (SQLite, PostgreSQL): what such a store
 * checks and prepares of an append before it is queued (the expected revision, the event ids,
 * non-empty and once each, and the JSON text of data and metadata that is both stored and
 * measured against MAX_APPEND_BYTES), and how stored metadata is read back.
 */
import type { EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from '../ports/event-store.js';

/** One event as stored: the JSON text of its data and of its metadata. */
export interface SerializedEvent {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

/** Binds `undefined` as JSON null so every stored column parses back. */
export function toJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

export function validExpectedRevision(expected: ExpectedRevision): ExpectedRevision {
  if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new TypeError(`expected revision must be a non-negative integer, got ${expected}`);
  }
  return expected;
}

export function serializeEvents(events: readonly NewEvent[]): SerializedEvent[] {
  const ids = new Set<string>();
  return events.map((event) => {
    if (typeof event.id !== 'string' || event.id.length === 0) throw new TypeError('event id must be a non-empty string');
    if (ids.has(event.id)) throw new TypeError(`event id ${event.id} appears twice in one append`);
    ids.add(event.id);
    return { id: event.id, type: event.type, data: toJson(event.data), metadata: toJson(event.metadata) };
  });
}

/** A stored event read back, from its columns; each store converts its own integer columns. */
export function recordedEvent(
  stream: string,
  eventId: string,
  type: string,
  data: string,
  metadata: string,
  revision: number,
  position: bigint,
): RecordedEvent {
  return {
    id: eventId,
    type,
    data: JSON.parse(data) as unknown,
    metadata: parseMetadata(metadata),
    streamName: stream,
    revision,
    position,
  };
}

/** Stored metadata parsed back; anything but a JSON object is a damaged store, said loudly. */
function parseMetadata(text: string): EventMetadata {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`stored event metadata is not an object: ${text.slice(0, 80)}`);
  }
  return value as EventMetadata;
}
