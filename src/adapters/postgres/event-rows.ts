/**
 * The events table of the PostgreSQL event store and the mapping between its rows and the
 * port's RecordedEvent.
 *
 * Global order: every append transaction first locks the one row of `event_head` (FOR UPDATE),
 * takes its positions from it and moves it in the same transaction. Writers therefore commit one
 * after another, positions are contiguous and in commit order, and a reader's snapshot that
 * holds position N holds every position below it: no gap can ever be skipped, and a reader never
 * waits for anyone's transaction. The price is that appends of all writers are serialised,
 * each holding the lock through its commit (docs/decisions: 0149).
 *
 * `stream` is in the "C" collation, so the (stream, revision) index sorts by code point and a
 * stream-name prefix is one key range (../stream-prefix.ts). Data and metadata are stored as the
 * JSON text that was appended and measured, byte for byte (jsonb would reorder keys).
 */
import type { RecordedEvent } from '../../ports/event-store.js';
import { recordedEvent } from '../event-json.js';

export const EVENTS_DDL = `
CREATE TABLE IF NOT EXISTS events (
  position bigint PRIMARY KEY,
  stream   text COLLATE "C" NOT NULL,
  revision bigint NOT NULL,
  event_id text NOT NULL UNIQUE,
  type     text NOT NULL,
  data     text NOT NULL,
  metadata text NOT NULL,
  UNIQUE (stream, revision)
);
CREATE TABLE IF NOT EXISTS event_head (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  position bigint NOT NULL
);
INSERT INTO event_head (one, position) VALUES (true, 0) ON CONFLICT DO NOTHING;
`;

/** The channel every store's commits are announced on; the payload is the store's schema. */
export const EVENTS_CHANNEL = 'gateway_events';

/** A row as node-postgres returns it: int8 columns come back as strings. */
export interface EventRow {
  position: string;
  stream: string;
  revision: string;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
}

export const COLUMNS = 'position, stream, revision, event_id, type, data, metadata';

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return recordedEvent(row.stream, row.event_id, row.type, row.data, row.metadata, Number(row.revision), BigInt(row.position));
}

/** LIKE patterns matching the names that start with each prefix (`%`, `_` and `\` escaped). */
export function prefixPatterns(prefixes: readonly string[]): string[] {
  return prefixes.map((prefix) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}

/** SQL's LIMIT from the port's maxCount: null means no limit. */
export function sqlLimit(maxCount: number | undefined): number | null {
  return maxCount === undefined ? null : Math.max(0, Math.trunc(maxCount));
}
