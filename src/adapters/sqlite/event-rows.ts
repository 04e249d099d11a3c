/**
 * The events table of the SQLite event store and the mapping between its rows and the port's
 * RecordedEvent. Positions are the rowid (INTEGER PRIMARY KEY): SQLite serialises writers and
 * hands out max(rowid) + 1 under the write lock, and events are never deleted, so positions
 * sort in commit order and no lower position becomes visible after a higher one.
 */
import type { RecordedEvent } from '../../ports/event-store.js';
import { recordedEvent } from '../event-json.js';
import type { SqliteDatabase } from './database.js';

export const EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  stream   TEXT    NOT NULL,
  revision INTEGER NOT NULL,
  event_id TEXT    NOT NULL UNIQUE,
  type     TEXT    NOT NULL,
  data     TEXT    NOT NULL,
  metadata TEXT    NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream, revision);
`;

/**
 * A row as read: the columns of COLUMNS in order. Rows are read as arrays (better-sqlite3's
 * `raw`) with integers as numbers: an object and two BigInts per row made the read of the account
 * streams 1.7 times as slow (1.87 against 1.11 s for 333,768 events; one BigInt per event is left,
 * the port's position).
 */
export type EventRow = [position: number, stream: string, revision: number, eventId: string, type: string, data: string, metadata: string];

/** The columns an EventRow is read from, in every query of the events table. */
export const COLUMNS = 'position, stream, revision, event_id, type, data, metadata';

export function toRecordedEvent(row: EventRow): RecordedEvent {
  const [position, stream, revision, eventId, type, data, metadata] = row;
  // Positions are rowids, read as numbers: exact below 2^53 (9 * 10^15 events), said loudly above.
  if (!Number.isSafeInteger(position)) throw new Error(`event position ${position} is beyond what a number holds exactly`);
  return recordedEvent(stream, eventId, type, data, metadata, revision, BigInt(position));
}

export interface EventQueries {
  readStream(stream: string, fromRevision: number, limit: number): EventRow[];
  /** Newest first: revisions at or below `fromRevision`. */
  readStreamBackwards(stream: string, fromRevision: number, limit: number): EventRow[];
  /** Events with after < position <= upTo, optionally of streams with one of the prefixes. */
  readRange(after: bigint, upTo: bigint, limit: number, prefixes: readonly string[]): EventRow[];
  head(): bigint;
}

export function prepareEventQueries(db: SqliteDatabase): EventQueries {
  // Two statements, not `LIMIT ?` bound to -1: with its LIMIT a bound parameter, SQLite took
  // 2.5 times as long over the same index (23 against 9 µs a read of one event, better-sqlite3
  // 12), and most reads of a stream are whole (a task's state since the last cached revision).
  const byStream = db.prepare<[string, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision`).raw(true);
  const byStreamLimited = db
    .prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`)
    .raw(true);
  const byStreamBackwards = db
    .prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`)
    .raw(true);
  const head = db.prepare<[], { head: bigint | null }>('SELECT MAX(position) AS head FROM events').safeIntegers(true);
  const byPrefixCount = new Map<number, ReturnType<typeof prepareRange>>();

  function prepareRange(prefixCount: number) {
    const filter = prefixCount === 0 ? '' : ` AND (${Array.from({ length: prefixCount }, () => 'instr(stream, ?) = 1').join(' OR ')})`;
    return db.prepare<unknown[], EventRow>(`SELECT ${COLUMNS} FROM events WHERE position > ? AND position <= ?${filter} ORDER BY position LIMIT ?`).raw(true);
  }

  return {
    readStream: (stream, fromRevision, limit) => (limit < 0 ? byStream.all(stream, fromRevision) : byStreamLimited.all(stream, fromRevision, limit)),
    readStreamBackwards: (stream, fromRevision, limit) => byStreamBackwards.all(stream, fromRevision, limit),
    readRange(after, upTo, limit, prefixes) {
      const statement = byPrefixCount.get(prefixes.length) ?? prepareRange(prefixes.length);
      byPrefixCount.set(prefixes.length, statement);
      return statement.all(after, upTo, ...prefixes, limit);
    },
    head: () => head.get()?.head ?? 0n,
  };
}

/** SQLite's LIMIT: a negative value means no limit. */
export function sqlLimit(maxCount: number | undefined): number {
  return maxCount === undefined ? -1 : Math.max(0, Math.trunc(maxCount));
}
