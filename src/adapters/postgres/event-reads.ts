/**
 * The reads of the PostgreSQL event store. A statement sees one snapshot, and positions become
 * visible in order (event-rows.ts), so a range read bounded by the head read in the same
 * statement is final: nothing can later appear at or below it.
 */
import type { RecordedEvent } from '../../ports/event-store.js';
import { prefixUpperBound } from '../stream-prefix.js';
import type { PostgresPool } from './database.js';
import { COLUMNS, prefixPatterns, toRecordedEvent, type EventRow } from './event-rows.js';

export interface RangeRead {
  /** At most `limit` events after the position, in position order. */
  events: RecordedEvent[];
  /** The head when read: every event at or below it is final. */
  head: bigint;
}

export interface EventReads {
  readStream(stream: string, fromRevision: number, limit: number | null): Promise<RecordedEvent[]>;
  /** Newest first: revisions at or below `fromRevision`. */
  readStreamBackwards(stream: string, fromRevision: number, limit: number | null): Promise<RecordedEvent[]>;
  readRange(after: bigint, limit: number | null, prefixes: readonly string[]): Promise<RangeRead>;
  head(): Promise<bigint>;
  streamsWithPrefix(prefix: string, pageSize: number): AsyncIterable<RecordedEvent[]>;
}

/** `opened` fails when the store is closed and waits for its tables: every read goes through it. */
export function createEventReads(pool: PostgresPool, opened: () => Promise<void>): EventReads {
  async function rows(sql: string, params: unknown[]): Promise<RecordedEvent[]> {
    await opened();
    return (await pool.query<EventRow>(sql, params)).rows.map(toRecordedEvent);
  }

  return {
    readStream: (stream, fromRevision, limit) =>
      rows(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`, [stream, fromRevision, limit]),

    readStreamBackwards: (stream, fromRevision, limit) =>
      rows(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`, [stream, fromRevision, limit]),

    async readRange(after, limit, prefixes) {
      await opened();
      // At least one row (the head), the events joined to it when there are any.
      const result = await pool.query<{ head: string } & { [K in keyof EventRow]: EventRow[K] | null }>(
        `SELECT h.position AS head, e.* FROM event_head h
           LEFT JOIN LATERAL (
             SELECT ${COLUMNS} FROM events
              WHERE position > $1 AND position <= h.position AND ($3::text[] IS NULL OR stream LIKE ANY($3::text[]))
              ORDER BY position LIMIT $2
           ) e ON true`,
        [after.toString(), limit, prefixes.length > 0 ? prefixPatterns(prefixes) : null],
      );
      const head = BigInt(result.rows[0]!.head);
      const events = result.rows.filter((row): row is { head: string } & EventRow => row.position !== null).map(toRecordedEvent);
      return { events, head };
    },

    async head() {
      await opened();
      return BigInt((await pool.query<{ position: string }>('SELECT position FROM event_head')).rows[0]!.position);
    },

    // Keyset pages over the (stream, revision) index: one index range per page, from (prefix, -1).
    async *streamsWithPrefix(prefix, pageSize) {
      const upper = prefixUpperBound(prefix);
      let stream = prefix;
      let revision = -1;
      for (;;) {
        const page = await rows(
          `SELECT ${COLUMNS} FROM events WHERE (stream, revision) > ($1, $2) AND ($3::text IS NULL OR stream < $3) ORDER BY stream, revision LIMIT $4`,
          [stream, revision, upper ?? null, pageSize],
        );
        const last = page.at(-1);
        if (!last) return;
        yield page;
        if (page.length < pageSize) return;
        stream = last.streamName;
        revision = last.revision;
      }
    },
  };
}
