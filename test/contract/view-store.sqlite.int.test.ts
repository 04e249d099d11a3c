import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { findSql, orderClause, whereClause } from '../../src/adapters/sqlite/view-queries.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { tempDir } from '../support/tmp.js';
import { newEvents } from './event-store.fixtures.js';
import { viewStoreContract } from './view-store.contract.js';
import { write } from './view-store.fixtures.js';

viewStoreContract('sqlite', async () => {
  const dir = tempDir('sqlite-vs-');
  const store = createSqliteViewStore({ path: join(dir.path, 'views.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      dir.remove();
    },
  };
});

describe('SQLite view store', () => {
  it("a query shape gets its view's own index: a periodic pass searches it, sorted, without reading every document", async () => {
    const dir = tempDir('sqlite-vs-');
    const path = join(dir.path, 'views.db');
    const store = createSqliteViewStore({ path });
    try {
      const docs = Array.from({ length: 200 }, (_, i) =>
        write('callbacks', `c${i}`, BigInt(i + 1), { state: i % 2 ? 'pending' : 'done', nextAttemptAt: 1000 - i }),
      );
      await store.commit('p', [...docs, write('other', 'o1', 201n, { state: 'pending', nextAttemptAt: 0 })], 201n);
      const due = await store.find<{ nextAttemptAt: number }>('callbacks', { state: 'pending' }, { sortBy: 'nextAttemptAt', limit: 3 });
      expect(due.map((d) => d.doc.nextAttemptAt)).toEqual([801, 803, 805]);
      expect(await store.count('callbacks', { state: 'pending' })).toBe(100);
      const db = new Database(path, { readonly: true });
      try {
        const plan = db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT id, position, doc FROM view_documents WHERE view = 'callbacks' AND doc IS NOT NULL AND doc -> '$."state"' = ? ORDER BY json_extract(doc, '$."nextAttemptAt"') ASC, id ASC LIMIT 3`,
          )
          .all('"pending"') as { detail: string }[];
        expect(plan.map((p) => p.detail)).toEqual([expect.stringMatching(/^SEARCH view_documents USING INDEX view_shape_\w+ \(<expr>=\?\)$/)]);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it("a sort with no equality (an expiry pass's oldest first) walks its shape's index instead of sorting the whole view", async () => {
    const dir = tempDir('sqlite-vs-');
    const path = join(dir.path, 'views.db');
    const store = createSqliteViewStore({ path });
    try {
      const docs = Array.from({ length: 500 }, (_, i) => write('asset-expiry', `a${i}`, BigInt(i + 1), { expireAt: 10_000 - ((i * 7919) % 500) }));
      await store.commit('p', [...docs, write('other', 'o1', 501n, { expireAt: 0 })], 501n);
      const oldest = await store.find<{ expireAt: number }>('asset-expiry', {}, { sortBy: 'expireAt', limit: 2 });
      expect(oldest.map((d) => d.doc.expireAt)).toEqual([9501, 9502]);
      const db = new Database(path, { readonly: true });
      try {
        const [index, ...others] = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_shape_%'").pluck().all() as string[];
        expect(others).toEqual([]);
        const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(2, 0) as { detail: string }[]).map((p) => p.detail);
        const shape = [whereClause({}), orderClause({ sortBy: 'expireAt' })] as const;
        // Left to the planner, the primary key wins and every document of the view is sorted.
        expect(plan(findSql('asset-expiry', ...shape, undefined))).toContain('USE TEMP B-TREE FOR ORDER BY');
        expect(plan(findSql('asset-expiry', ...shape, index))).toEqual([`SCAN view_documents USING INDEX ${index}`]);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('a commit that fails part-way leaves neither its writes nor its checkpoint', async () => {
    const dir = tempDir('sqlite-vs-');
    const store = createSqliteViewStore({ path: join(dir.path, 'views.db') });
    try {
      const unserialisable = { amount: 10n };
      await expect(store.commit('p', [write('tasks', 'good', 1n, { ok: true }), write('tasks', 'bad', 2n, unserialisable)], 2n)).rejects.toThrow();
      expect(await store.get('tasks', 'good')).toBeUndefined();
      expect(await store.getCheckpoint('p')).toBeUndefined();
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('keeps documents and checkpoints after the file is closed and reopened', async () => {
    const dir = tempDir('sqlite-vs-');
    const path = join(dir.path, 'views.db');
    try {
      const first = createSqliteViewStore({ path });
      await first.commit('p', [write('tasks', 'a', 3n, { v: 1 })], 3n);
      await first.close();
      const reopened = createSqliteViewStore({ path });
      expect(await reopened.get('tasks', 'a')).toEqual({ id: 'a', position: 3n, doc: { v: 1 } });
      expect(await reopened.getCheckpoint('p')).toBe(3n);
      await reopened.close();
    } finally {
      dir.remove();
    }
  });

  it('shares one database file with the event store', async () => {
    const dir = tempDir('sqlite-vs-');
    const path = join(dir.path, 'gateway.db');
    const events = createSqliteEventStore({ path });
    const views = createSqliteViewStore({ path });
    try {
      const appended = await events.append('task-1', newEvents(2));
      await views.commit('tasks', [write('tasks', 'task-1', appended.position, { status: 'queued' })], appended.position);
      expect(await views.getCheckpoint('tasks')).toBe(appended.position);
      expect(await events.readStream('task-1')).toHaveLength(2);
    } finally {
      await events.close();
      await views.close();
      dir.remove();
    }
  });

  it('rejects field paths it cannot express safely', async () => {
    const dir = tempDir('sqlite-vs-');
    const store = createSqliteViewStore({ path: join(dir.path, 'views.db') });
    try {
      await expect(store.find('tasks', { "a'b": 1 })).rejects.toThrow(/path/);
      await expect(store.find('tasks', {}, { sortBy: 'a..b' })).rejects.toThrow(/path/);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
