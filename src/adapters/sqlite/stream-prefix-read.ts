/**
 * `readStreamsWithPrefix` on the SQLite store: the streams whose names start with a prefix,
 * read through the `(stream, revision)` index as one key range, one stream after another in
 * name order, so the events of other streams are never touched (a full-store replay of the
 * account streams skips the task events, two thirds of the store, entirely).
 *
 * Pages continue from the last `(stream, revision)` read (a keyset, not an offset), so each
 * page is one index seek and memory stays bounded by the page size.
 */
import type { RecordedEvent } from '../../ports/event-store.js';
import type { SqliteDatabase } from './database.js';
import { COLUMNS, toRecordedEvent, type EventRow } from './event-rows.js';
import { prefixUpperBound } from '../stream-prefix.js';

export type StreamsWithPrefixRead = (prefix: string, pageSize: number) => AsyncIterable<RecordedEvent[]>;

/**
 * One page: `(stream, revision) > (?, ?)` is a range in the index's own key order, and starting
 * from (prefix, -1) makes the first page `stream >= prefix` (revisions are never negative). The
 * query plan is a SEARCH of events_stream_revision with no sort (a test holds it to that).
 */
export const STREAMS_WITH_PREFIX_SQL = {
  bounded: `SELECT ${COLUMNS} FROM events WHERE (stream, revision) > (?, ?) AND stream < ? ORDER BY stream, revision LIMIT ?`,
  /** For a prefix with no upper bound (the empty prefix). */
  open: `SELECT ${COLUMNS} FROM events WHERE (stream, revision) > (?, ?) ORDER BY stream, revision LIMIT ?`,
};

export function prepareStreamsWithPrefixRead(db: SqliteDatabase, assertOpen: () => void): StreamsWithPrefixRead {
  const bounded = db.prepare<[string, number, string, number], EventRow>(STREAMS_WITH_PREFIX_SQL.bounded).raw(true);
  const open = db.prepare<[string, number, number], EventRow>(STREAMS_WITH_PREFIX_SQL.open).raw(true);

  return async function* readStreamsWithPrefix(prefix, pageSize) {
    const upper = prefixUpperBound(prefix);
    let stream = prefix;
    let revision = -1;
    for (;;) {
      assertOpen();
      const rows: EventRow[] = upper === undefined ? open.all(stream, revision, pageSize) : bounded.all(stream, revision, upper, pageSize);
      const last = rows.at(-1);
      if (!last) return;
      yield rows.map(toRecordedEvent);
      if (rows.length < pageSize) return;
      [, stream, revision] = last;
    }
  };
}
