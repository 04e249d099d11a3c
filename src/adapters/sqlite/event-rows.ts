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

export interface EventRow {
  position: bigint;
  stream: string;
  revision: bigint;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
}

/** The columns an EventRow is read from, in every query of the events table. */
export const COLUMNS = 'position, stream, revision, event_id, type, data, metadata';

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return recordedEvent(row, Number(row.revision), row.position);
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
  const byStream = db
    .prepare<[string, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision`)
    .safeIntegers(true);
  const byStreamLimited = db
    .prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`)
    .safeIntegers(true);
  const byStreamBackwards = db
    .prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`)
    .safeIntegers(true);
  const head = db.prepare<[], { head: bigint | null }>('SELECT MAX(position) AS head FROM events').safeIntegers(true);
  const byPrefixCount = new Map<number, ReturnType<typeof prepareRange>>();

  function prepareRange(prefixCount: number) {
    const filter = prefixCount === 0 ? '' : ` AND (${Array.from({ length: prefixCount }, () => 'instr(stream, ?) = 1').join(' OR ')})`;
    return db
      .prepare<unknown[], EventRow>(`SELECT ${COLUMNS} FROM events WHERE position > ? AND position <= ?${filter} ORDER BY position LIMIT ?`)
      .safeIntegers(true);
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
