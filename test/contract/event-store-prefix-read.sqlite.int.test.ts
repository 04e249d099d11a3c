/**
 * The SQLite store's readStreamsWithPrefix beyond the shared contract: the key range it reads
 * and that SQLite answers it from the (stream, revision) index, never by scanning the table.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/sqlite/database.js';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { EVENTS_SCHEMA } from '../../src/adapters/sqlite/event-rows.js';
import { STREAMS_WITH_PREFIX_SQL } from '../../src/adapters/sqlite/stream-prefix-read.js';
import { prefixUpperBound } from '../../src/adapters/stream-prefix.js';
import { tempDir } from '../support/tmp.js';
import { newEvents } from './event-store.fixtures.js';

describe('SQLite readStreamsWithPrefix', () => {
  it('bounds the range just above every name with the prefix', () => {
    expect(prefixUpperBound('account-')).toBe('account.');
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('\u{D7FF}')).toBe('\u{E000}');
    expect(prefixUpperBound('\u{1F600}')).toBe('\u{1F601}');
    expect(prefixUpperBound('\u{10FFFF}')).toBeUndefined();
    expect(prefixUpperBound('')).toBeUndefined();
  });

  it('reads through the (stream, revision) index, without a table scan or a sort', () => {
    const dir = tempDir('sqlite-es-plan-');
    const db = openSqlite(join(dir.path, 'events.db'));
    try {
      db.exec(EVENTS_SCHEMA);
      const plan = (sql: string, ...params: unknown[]) =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...params)
          .map((row) => row.detail);
      const bounded = plan(STREAMS_WITH_PREFIX_SQL.bounded, 'account-', -1, 'account.', 1000);
      const open = plan(STREAMS_WITH_PREFIX_SQL.open, '', -1, 1000);
      for (const details of [bounded, open]) {
        expect(details).toHaveLength(1);
        expect(details[0]).toMatch(/^SEARCH events USING INDEX events_stream_revision \(\(stream,revision\)>\(\?,\?\)/);
      }
      expect(bounded[0]).toContain('stream<?');
    } finally {
      db.close();
      dir.remove();
    }
  });

  it('reads every stream with the empty prefix, and fails a read that outlives the store', async () => {
    const dir = tempDir('sqlite-es-');
    const store = createSqliteEventStore({ path: join(dir.path, 'events.db') });
    try {
      await store.append('b', newEvents(2));
      await store.append('a', newEvents(1));
      const all = [];
      for await (const page of store.readStreamsWithPrefix('')) all.push(...page);
      expect(all.map((event) => `${event.streamName}@${event.revision}`)).toEqual(['a@0', 'b@0', 'b@1']);

      const pages = store.readStreamsWithPrefix('', { pageSize: 1 })[Symbol.asyncIterator]();
      expect((await pages.next()).value).toHaveLength(1);
      await store.close();
      await expect(pages.next()).rejects.toThrow(/closed/);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
