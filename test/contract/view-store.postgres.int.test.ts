/**
 * The shared ViewStore contract against a real PostgreSQL server (POSTGRES_URL, started in CI by
 * scripts/postgres-local.sh, or a container), each store on a fresh schema. Then what is
 * PostgreSQL's own: a query shape served by its view's partial index; a commit that fails
 * part-way (in JavaScript, or on the server after a first statement went through) leaves
 * nothing; two stores (two processes) committing the same documents at once, the higher position
 * always winning; the same answers as the SQLite adapter where jsonb could differ (types, sort
 * order, sequential counting of a batch's writes); bulk loads; and text jsonb refuses (NUL,
 * lone surrogates) stored and matched exactly.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { countQuery, findQuery, type ViewQuery } from '../../src/adapters/postgres/view-queries.js';
import { createPostgresViewStore } from '../../src/adapters/postgres/view-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { StoreUnavailableError } from '../../src/ports/store-unavailable.js';
import type { ViewDocument, ViewFieldValue, ViewStore, ViewWrite } from '../../src/ports/view-store.js';
import { contractTarget, useBackend } from '../support/containers.js';
import { freshSchema } from '../support/postgres.js';
import { tempDir } from '../support/tmp.js';
import { viewStoreContract } from './view-store.contract.js';
import { docIds, uniqueView, write } from './view-store.fixtures.js';

const target = contractTarget('postgres', 'PostgreSQL view store');
vi.setConfig({ testTimeout: 60_000 });

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

describe.skipIf(!target.available)(target.title, () => {
  const url = useBackend(target, 'PostgreSQL');

  viewStoreContract('PostgreSQL', async () => {
    const schema = freshSchema(url(), 'vs');
    const store = createPostgresViewStore({ url: url(), schema: schema.schema });
    return {
      store,
      async cleanup() {
        await store.close();
        await schema.drop();
      },
    };
  });

  async function withStores<T>(count: number, run: (stores: ViewStore[], schema: string) => Promise<T>, database = url()): Promise<T> {
    const schema = freshSchema(database, 'vs');
    const stores = Array.from({ length: count }, () => createPostgresViewStore({ url: database, schema: schema.schema }));
    try {
      return await run(stores, schema.schema);
    } finally {
      for (const store of stores) await store.close();
      await schema.drop();
    }
  }

  /** A PostgreSQL store and a SQLite store side by side, to compare their answers. */
  async function withSqliteBeside<T>(run: (postgres: ViewStore, sqlite: ViewStore) => Promise<T>, database = url()): Promise<T> {
    const dir = tempDir('pg-vs-sqlite-');
    const sqlite = createSqliteViewStore({ path: join(dir.path, 'views.db') });
    try {
      return await withStores(1, ([postgres]) => run(postgres!, sqlite), database);
    } finally {
      await sqlite.close();
      dir.remove();
    }
  }

  /** A database of its own whose default collation is ICU's "en" (B after a, é before Z), dropped afterwards. */
  async function withEnglishDatabase<T>(run: (database: string) => Promise<T>): Promise<T> {
    const name = `vs_en_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C'`);
      const database = new URL(url());
      database.pathname = `/${name}`;
      try {
        return await run(database.toString());
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    } finally {
      await admin.end();
    }
  }

  async function withClient<T>(schema: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url(), options: `-c search_path=${schema}` });
    await client.connect();
    try {
      return await run(client);
    } finally {
      await client.end();
    }
  }

  describe('PostgreSQL view store', () => {
    it("a query shape gets its view's own index: a periodic pass searches it, sorted either way, without reading every document", async () => {
      await withStores(1, async ([store], schema) => {
        const callbacks = Array.from({ length: 2000 }, (_, i) =>
          write('callbacks', `c${i}`, BigInt(i + 1), { state: i % 2 ? 'pending' : 'done', nextAttemptAt: 10_000 - i }),
        );
        const other = Array.from({ length: 2000 }, (_, i) => write('other', `o${i}`, BigInt(2001 + i), { state: 'pending', nextAttemptAt: i }));
        await store!.commit('p', [...callbacks, ...other], 4000n);
        const due = await store!.find<{ nextAttemptAt: number }>('callbacks', { state: 'pending' }, { sortBy: 'nextAttemptAt', limit: 3 });
        expect(due.map((d) => d.doc.nextAttemptAt)).toEqual([8001, 8003, 8005]);
        const latest = await store!.find<{ nextAttemptAt: number }>('callbacks', { state: 'pending' }, { sortBy: 'nextAttemptAt', desc: true, limit: 2 });
        expect(latest.map((d) => d.doc.nextAttemptAt)).toEqual([9999, 9997]);
        expect(await store!.count('callbacks', { state: 'pending' })).toBe(1000);

        const [ascending, descending, counting] = await withClient(schema, async (client) => {
          await client.query('ANALYZE view_documents');
          const explain = async ({ text, values }: ViewQuery) => {
            const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
            return planNodes(rows[0]!['QUERY PLAN'][0].Plan);
          };
          const pending = { state: 'pending' };
          return [
            await explain(findQuery('callbacks', pending, { sortBy: 'nextAttemptAt', limit: 3 })),
            await explain(findQuery('callbacks', pending, { sortBy: 'nextAttemptAt', desc: true, limit: 3 })),
            await explain(countQuery('callbacks', pending)),
          ];
        });
        const shapeIndex = expect.stringMatching(/^view_shape_[0-9a-f]{16}$/);
        expect(ascending.map((node) => node['Node Type'])).toEqual(['Limit', 'Index Scan']);
        expect(ascending[1]).toMatchObject({ 'Index Name': shapeIndex, 'Scan Direction': 'Forward' });
        expect(descending.map((node) => node['Node Type'])).toEqual(['Limit', 'Index Scan']);
        expect(descending[1]).toMatchObject({ 'Index Name': shapeIndex, 'Scan Direction': 'Backward' });
        // The count has no index of its own: the find's serves it by its leading column.
        expect(counting.find((node) => node['Index Name'])).toMatchObject({ 'Index Name': shapeIndex });
        expect(counting.map((node) => node['Node Type'])).not.toContain('Seq Scan');
      });
    });

    it('a commit that fails part-way leaves neither its writes nor its checkpoint', async () => {
      await withStores(1, async ([store]) => {
        const unserialisable = { amount: 10n };
        await expect(store!.commit('p', [write('tasks', 'good', 1n, { ok: true }), write('tasks', 'bad', 2n, unserialisable)], 2n)).rejects.toThrow();
        expect(await store!.get('tasks', 'good')).toBeUndefined();
        expect(await store!.getCheckpoint('p')).toBeUndefined();

        // The server refuses the checkpoint (above bigint) after the first statement wrote its documents.
        const many = Array.from({ length: 1500 }, (_, i) => write('tasks', `t${i}`, BigInt(i + 1), { i }));
        await expect(store!.commit('p', many, 2n ** 63n)).rejects.toThrow(/out of range/);
        expect(await store!.count('tasks', {})).toBe(0);
        expect(await store!.getCheckpoint('p')).toBeUndefined();
        // The server refuses a document of the second chunk (ids go in order), after the first chunk was written.
        await expect(store!.commit('p', [...many, write('tasks', 'zz-last', 2n ** 63n, {})], 5n)).rejects.toThrow(/out of range/);
        expect(await store!.count('tasks', {})).toBe(0);
        expect(await store!.getCheckpoint('p')).toBeUndefined();
      });
    });

    it('two stores on one schema (two processes) commit the same documents at once: the higher position always wins', async () => {
      await withStores(2, async (stores) => {
        const ids = Array.from({ length: 40 }, (_, i) => `d${i}`);
        const random = seeded(7);
        // Every position once, dealt at random to documents, stores and batches.
        const positions = Array.from({ length: 2400 }, (_, i) => BigInt(i + 1)).sort(() => random() - 0.5);
        const batches = stores.map((_, writer) =>
          Array.from({ length: 20 }, (_, batch) =>
            Array.from({ length: 60 }, (_, n) => {
              const position = positions[(writer * 20 + batch) * 60 + n]!;
              return write('docs', ids[Math.floor(random() * ids.length)]!, position, { writer, position: Number(position) });
            }),
          ),
        );
        // Each store sends all its commits at once: up to a pool's worth of transactions each, on the same rows.
        const newestOf = (batch: readonly ViewWrite[]) => batch.reduce((max, w) => (w.position > max ? w.position : max), 0n);
        await Promise.all(stores.flatMap((store, writer) => batches[writer]!.map((batch) => store.commit('shared', batch, newestOf(batch)))));
        const newest = new Map<string, ViewWrite>();
        for (const w of batches.flat(2)) if ((newest.get(w.id)?.position ?? 0n) < w.position) newest.set(w.id, w);
        for (const reader of stores) {
          const stored = await reader.getMany('docs', ids);
          expect(stored.map(({ id, position, doc }) => ({ id, position, doc }))).toEqual(
            ids.flatMap((id) => {
              const w = newest.get(id);
              return w ? [{ id, position: w.position, doc: w.doc }] : [];
            }),
          );
          expect(await reader.getCheckpoint('shared')).toBe(2400n);
        }
        // Both make the same new shape's index at once: one builds it, the other finds it built.
        const found = await Promise.all(stores.map((store) => store.find('docs', { writer: 1 }, { sortBy: 'position' })));
        expect(docIds(found[0]!)).toEqual(docIds(found[1]!));
      });
    });

    it.each([
      ['the server database', (compare: (database: string) => Promise<void>) => compare(url())],
      ['a database whose collation is ICU "en"', (compare: (database: string) => Promise<void>) => withEnglishDatabase(compare)],
    ])('finds and sorts like the SQLite adapter: JSON types, missing and null fields, code-point order of strings, no array indexing (%s)', async (_, on) => {
      await on((database) =>
        withSqliteBeside(async (postgres, sqlite) => {
          const values: (ViewFieldValue | undefined)[] = [
            undefined,
            null,
            0,
            -2.5,
            1,
            2,
            1e21,
            0.1,
            true,
            false,
            '',
            'B',
            'a',
            'Z',
            'é',
            'e\u0301',
            '😀',
            '\uffee',
            '10',
            '9',
            '1',
            'true',
            'null',
          ];
          const view = uniqueView();
          const writes: ViewWrite[] = values.map((v, i) =>
            write(view, `d${String(i).padStart(2, '0')}`, BigInt(i + 1), v === undefined ? { other: 1 } : { v, nested: { v } }),
          );
          writes.push(write(view, 'array', 100n, { a: [10, 20], v: [1] }), write(view, 'object', 101n, { a: { 1: 20 }, v: { x: 1 } }));
          for (const store of [postgres, sqlite]) await store.commit('p', writes, 101n);

          const answers = async (store: ViewStore) => {
            const ids = (documents: ViewDocument[]) => docIds(documents).join(' ');
            const matches: string[] = [];
            for (const v of [...values.filter((v) => v !== undefined), 20]) {
              matches.push(ids(await store.find(view, { v })), ids(await store.find(view, { 'nested.v': v })));
            }
            matches.push(ids(await store.find(view, { v: null })), ids(await store.find(view, { 'a.1': 20 })), ids(await store.find(view, { 'a.1': null })));
            // Objects and arrays sort as their JSON text, which jsonb writes differently: left out of the order.
            const sortable = { 'a.1': null };
            const orders: string[] = [];
            for (const desc of [false, true]) {
              orders.push(
                ids(await store.find(view, sortable, { sortBy: 'v', desc })),
                ids(await store.find(view, sortable, { sortBy: 'nested.v', desc, limit: 7, offset: 3 })),
              );
              orders.push(ids(await store.find(view, { 'nested.v': null }, { desc })));
            }
            return { matches, orders, counts: [await store.count(view, { v: null }), await store.count(view, { v: 1 })] };
          };
          expect(await answers(postgres)).toEqual(await answers(sqlite));
        }, database),
      );
    });

    it('commits like the SQLite adapter: each write guarded in order, the same counts, documents and checkpoints', async () => {
      await withSqliteBeside(async (postgres, sqlite) => {
        const writeArb = fc.record({
          view: fc.integer({ min: 0, max: 1 }),
          id: fc.constantFrom('a', 'b', 'c'),
          position: fc.bigInt({ min: 1n, max: 12n }),
          doc: fc.option(fc.record({ v: fc.integer({ min: 0, max: 99 }) }), { nil: null }),
        });
        const commitArb = fc.record({
          writes: fc.array(writeArb, { maxLength: 8 }),
          checkpoint: fc.option(fc.bigInt({ min: 1n, max: 12n }), { nil: undefined }),
          together: fc.boolean(),
        });
        await fc.assert(
          fc.asyncProperty(fc.array(commitArb, { minLength: 1, maxLength: 6 }), async (commits) => {
            const views = [uniqueView(), uniqueView()];
            const [first, second] = [uniqueView('projection'), uniqueView('projection')];
            const state = async (store: ViewStore) => ({
              documents: await Promise.all(views.map((view) => store.getMany(view, ['a', 'b', 'c']))),
              checkpoints: [await store.getCheckpoint(first), await store.getCheckpoint(second)],
            });
            for (const { writes: drawn, checkpoint, together } of commits) {
              const writes = drawn.map((w) => write(views[w.view]!, w.id, w.position, w.doc));
              const half = Math.floor(writes.length / 2);
              const applied = await Promise.all(
                [postgres, sqlite].map((store) =>
                  together
                    ? store.commitAll(
                        [
                          { projection: first, writes: writes.slice(0, half) },
                          { projection: second, writes: writes.slice(half) },
                        ],
                        checkpoint ?? 1n,
                      )
                    : store.commit(first, writes, checkpoint),
                ),
              );
              expect(applied[0]).toBe(applied[1]);
            }
            expect(await state(postgres)).toEqual(await state(sqlite));
          }),
          { numRuns: 60 },
        );
      });
    });

    it('bulkLoad replaces without a guard in chunks, the last write of an id winning, keeps tombstones, and moves the checkpoint forward only', async () => {
      await withStores(1, async ([store]) => {
        const view = uniqueView();
        await store!.commit('p', [write(view, 'kept', 50n, { v: 'old' }), write(view, 'gone', 50n, { v: 'old' })], 50n);
        const load: ViewWrite[] = Array.from({ length: 2500 }, (_, i) => write(view, `n${i}`, BigInt(i + 1), { i }));
        load.push(write(view, 'kept', 3n, { v: 'first' }), write(view, 'gone', 4n, null), write(view, 'kept', 2n, { v: 'rebuilt' }));
        await store!.bulkLoad('p', load, 40n);
        expect(await store!.count(view, {})).toBe(2501);
        expect(await store!.get(view, 'kept')).toEqual({ id: 'kept', position: 2n, doc: { v: 'rebuilt' } });
        expect(await store!.get(view, 'gone')).toBeUndefined();
        expect(await store!.getCheckpoint('p')).toBe(50n);
        // The tombstone guards like commit's: an older write does not bring the document back.
        expect(await store!.commit('p', [write(view, 'gone', 3n, { v: 'replayed' })], undefined)).toBe(0);
        await store!.bulkLoad('p', [], 60n);
        expect(await store!.getCheckpoint('p')).toBe(60n);
      });
    });

    it('stores and matches text jsonb refuses (NUL, lone surrogates) and the character that encodes it, exactly as written', async () => {
      await withStores(1, async ([store]) => {
        const view = uniqueView();
        const odd = {
          'key\u0000with NUL': 'a\u0000b',
          lone: 'x\ud800y',
          trail: '\udfff',
          pair: '😀',
          mark: '\uffff',
          markHex: '\uffff0000',
          looksEscaped: '\\u0000 \\\\u0000',
          [`mark\uffffkey`]: 1,
          list: [{ s: '\u0000\u0000' }],
        };
        await store!.commit('p', [write(view, 'odd', 1n, odd), write(view, 'near', 2n, { lone: 'x\ufffdy', mark: '\uffff\uffff', markHex: '\u0000' })], 2n);
        expect(await store!.get(view, 'odd')).toEqual({ id: 'odd', position: 1n, doc: odd });
        for (const [field, value] of Object.entries(odd)) {
          if (typeof value === 'object' || field.includes('\u0000')) continue;
          expect(docIds(await store!.find(view, { [field]: value })), field).toEqual(['odd']);
        }
        expect(docIds(await store!.find(view, { markHex: '\u0000' }))).toEqual(['near']);
        expect(docIds(await store!.find(view, {}, { sortBy: 'mark' }))).toEqual(['odd', 'near']);
        // Names a text column cannot hold are refused, not changed into others.
        await expect(store!.commit('p', [write(view, 'id\u0000', 3n, {})], undefined)).rejects.toThrow(TypeError);
        await expect(store!.commit('p', [write(view, '\ud800', 3n, {})], undefined)).rejects.toThrow(TypeError);
        expect(await store!.get(view, 'id\u0000')).toBeUndefined();
        expect(await store!.getMany(view, ['\ud800', 'odd'])).toHaveLength(1);
      });
    });

    it('rejects field paths it cannot express safely', async () => {
      await withStores(1, async ([store]) => {
        await expect(store!.find('tasks', { "a'b": 1 })).rejects.toThrow(/path/);
        await expect(store!.find('tasks', {}, { sortBy: 'a..b' })).rejects.toThrow(/path/);
        await expect(store!.count('tasks', { 'a\\b': 1 })).rejects.toThrow(/path/);
      });
    });

    it('is closed once, and refuses calls after', async () => {
      const schema = freshSchema(url(), 'vs');
      const store = createPostgresViewStore({ url: url(), schema: schema.schema });
      try {
        await store.ping();
        await store.close();
        await store.close();
        await expect(store.get('tasks', 'a')).rejects.toThrow(/closed/);
      } finally {
        await schema.drop();
      }
    });

    it('a server that cannot be reached: reads, commits and ping fail as StoreUnavailableError', async () => {
      const store = createPostgresViewStore({ url: 'postgres://gateway@127.0.0.1:1/gateway', schema: 'unreachable' });
      try {
        await expect(store.get('tasks', 'a')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.commit('p', [write('tasks', 'a', 1n, { n: 1 })], 1n)).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.ping()).rejects.toThrow(/^PostgreSQL is unavailable: /);
      } finally {
        await store.close();
      }
    });
  });
});

/** A small seeded generator (mulberry32): the same batches every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
