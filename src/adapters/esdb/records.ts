/**
 * Mapping between the port's events and `@eventstore/db-client`'s, and the one position the
 * port knows. EventStoreDB positions are `{commit, prepare}` pairs in its transaction log. Every
 * event written through gRPC is its own implicitly committed prepare record, so in `$all` reads
 * and in stream reads (server 22.6+) both numbers equal the event's log position, and append
 * results carry the last event's log position. The adapter therefore normalises a position to
 * its `commit` part: one bigint per event, unique and ascending in commit order. Going back,
 * `p` becomes `{commit: p, prepare: p}`, the exact position of that event.
 */
import { ErrorType, isCommandError, jsonEvent, type EventData, type JSONType, type Position } from '@eventstore/db-client';
import type { EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from '../../ports/event-store.js';

/** What EventStoreDB answers in a position field it has no value for (ulong max). */
const NO_POSITION = 2n ** 64n - 1n;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The fields both read paths (`readStream`, `readAll`/`subscribeToAll`) give for an event. */
export interface ClientRecordedEvent {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  isJson: boolean;
  data: unknown;
  metadata: unknown;
  created: Date;
  position?: Position;
}

export function toEsdbPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** The full position of a read event, or undefined when the server sent none. */
export function fullPosition(event: ClientRecordedEvent): Position | undefined {
  const position = event.position;
  if (!position || position.commit === NO_POSITION || position.commit < 0n) return undefined;
  return position;
}

/** Events of EventStoreDB itself: `$`-streams (`$stats-…`, `$$meta`) and `$`-types (`$metadata`, `$>`). */
export function isSystemEvent(event: ClientRecordedEvent): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

export function matchesPrefixes(streamName: string, prefixes: readonly string[]): boolean {
  return prefixes.length === 0 || prefixes.some((prefix) => streamName.startsWith(prefix));
}

export function toRecordedEvent(event: ClientRecordedEvent): RecordedEvent {
  const position = fullPosition(event);
  if (!position) {
    throw new Error(
      `EventStoreDB returned no log position for ${event.streamId}@${event.revision}: ` +
        'this adapter needs EventStoreDB 22.6 or later (positions on stream reads)',
    );
  }
  return {
    id: event.id.toLowerCase(),
    type: event.type,
    data: decodeData(event),
    metadata: decodeMetadata(event),
    streamName: event.streamId,
    revision: Number(event.revision),
    position: position.commit,
  };
}

function decodeData(event: ClientRecordedEvent): unknown {
  if (event.isJson || !(event.data instanceof Uint8Array)) return event.data;
  // Written by another tool as bytes: JSON if it parses, else the text.
  const text = Buffer.from(event.data).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function decodeMetadata(event: ClientRecordedEvent): EventMetadata {
  const metadata = event.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && !(metadata instanceof Uint8Array)) {
    const fields = metadata as Record<string, unknown>;
    return { ...fields, at: typeof fields.at === 'string' ? fields.at : event.created.toISOString() };
  }
  // Not written by the gateway (no metadata or not an object): the server's time stands in.
  return { at: event.created.toISOString() };
}

/** Validates the events of one append: UUID ids (EventStoreDB requires them), none twice. */
export function eventIdsOf(events: readonly NewEvent[]): string[] {
  const ids = events.map((event) => {
    if (typeof event.id !== 'string' || !UUID.test(event.id)) {
      throw new TypeError(`event id must be a UUID, got ${JSON.stringify(event.id)}`);
    }
    return event.id.toLowerCase();
  });
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw new TypeError(`event id ${id} appears twice in one append`);
    seen.add(id);
  }
  return ids;
}

export function toEventData(event: NewEvent): EventData {
  return jsonEvent({ id: event.id, type: event.type, data: jsonValue(event.data), metadata: jsonValue(event.metadata) });
}

/**
 * The JSON value the client will write (it serialises with JSON.stringify and parses on read):
 * normalised here so `undefined` becomes null, as in the SQLite store, and a value that cannot
 * be serialised (a bigint) fails before anything is sent.
 */
function jsonValue(value: unknown): JSONType {
  const parsed: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
  // Any JSON value: the client's JSONType names only the common shapes.
  return parsed as JSONType;
}

export function validExpectedRevision(expected: ExpectedRevision): ExpectedRevision {
  if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new TypeError(`expected revision must be a non-negative integer, got ${expected}`);
  }
  if (typeof expected === 'string' && !['any', 'no_stream', 'stream_exists'].includes(expected)) {
    throw new TypeError(`unknown expected revision ${JSON.stringify(expected)}`);
  }
  return expected;
}

export function isCommandErrorOf(error: unknown, ...types: ErrorType[]): boolean {
  return error instanceof Error && isCommandError(error) && types.includes(error.type);
}
