/**
 * Poll from memory (projections/view-cache.ts): task views answered from an LRU kept current by
 * the runner's commits, never a stale document after a commit.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewDocument, ViewStore } from '../../src/ports/view-store.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { withViewCache, type CachedViewStore } from '../../projections/view-cache.js';
import { tempDir } from '../support/tmp.js';
import { progressedEvent, progressProjection, submittedEvent, type ProgressDoc } from './support.js';

type Doc = ProgressDoc;

let dir: ReturnType<typeof tempDir>;
let store: ViewStore;
let cached: CachedViewStore;

beforeEach(() => {
  dir = tempDir();
  store = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  cached = withViewCache(store, ['tasks'], 2);
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

const write = (id: string, position: bigint, doc: Doc | null) => ({ view: 'tasks', id, position, doc });

describe('view cache', () => {
  it('a miss reads the store and is cached; the next read is a hit', async () => {
    await cached.commit('p', [write('t1', 1n, { status: 'queued', progress: 0 })], 1n);
    expect((await cached.get<Doc>('tasks', 't1'))?.doc).toEqual({ status: 'queued', progress: 0 });
    expect((await cached.get<Doc>('tasks', 't1'))?.doc).toEqual({ status: 'queued', progress: 0 });
    expect(cached.cacheStats()).toEqual({ hits: 1, misses: 1, documents: 1 });
  });

  it('a stale document is never answered after a commit: the commit replaces or drops it', async () => {
    await cached.commit('p', [write('t1', 1n, { status: 'queued', progress: 0 })], 1n);
    await cached.get('tasks', 't1');
    await cached.commit('p', [write('t1', 5n, { status: 'in_progress', progress: 50 })], 5n);
    const after = await cached.get<Doc>('tasks', 't1');
    expect(after).toEqual({ id: 't1', position: 5n, doc: { status: 'in_progress', progress: 50 } });
    expect(cached.cacheStats().hits).toBe(1);
    // The store agrees with what the cache answered.
    expect(await store.get('tasks', 't1')).toEqual(after);

    await cached.commit('p', [write('t1', 6n, null)], 6n);
    expect(await cached.get('tasks', 't1')).toBeUndefined();
    expect(await cached.get('tasks', 't1')).toBeUndefined(); // absence is not cached: both read the store
    expect(cached.cacheStats().misses).toBe(3);
  });

  it('a write the store ignores (at or below its position) does not replace the cached document', async () => {
    await cached.commit('p', [write('t1', 5n, { status: 'in_progress', progress: 50 })], 5n);
    await cached.get('tasks', 't1');
    await cached.commit('p', [write('t1', 3n, { status: 'queued', progress: 0 })], 5n);
    expect((await cached.get<Doc>('tasks', 't1'))?.doc.progress).toBe(50);
    expect((await store.get<Doc>('tasks', 't1'))?.doc.progress).toBe(50);
  });

  it('a miss whose store read overlapped a commit does not cache the document it read', async () => {
    await store.commit('p', [write('t1', 1n, { status: 'queued', progress: 0 })], 1n);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The store answers the read with what it held before the commit below.
    const slow: ViewStore = {
      ...store,
      get: async <T>(view: string, id: string) => {
        const old = await store.get<T>(view, id);
        await gate;
        return old;
      },
      commit: (p, w, c) => store.commit(p, w, c),
    };
    const racing = withViewCache(slow, ['tasks']);
    const reading = racing.get<Doc>('tasks', 't1');
    await racing.commit('p', [write('t1', 2n, { status: 'in_progress', progress: 10 })], 2n);
    release();
    expect((await reading)?.doc.progress).toBe(0); // the read itself began before the commit
    expect((await racing.get<Doc>('tasks', 't1'))?.doc.progress).toBe(10); // but was not cached
  });

  it('a failed commit drops the documents it touched', async () => {
    await cached.commit('p', [write('t1', 1n, { status: 'queued', progress: 0 })], 1n);
    await cached.get('tasks', 't1');
    const failing = withViewCache({ ...store, get: (v, i) => store.get(v, i), commit: () => Promise.reject(new Error('disk full')) }, ['tasks']);
    await failing.get('tasks', 't1');
    await expect(failing.commit('p', [write('t1', 2n, { status: 'in_progress', progress: 10 })], 2n)).rejects.toThrow('disk full');
    expect(failing.cacheStats().documents).toBe(0);
    expect((await failing.get<Doc>('tasks', 't1'))?.doc.progress).toBe(0);
  });

  it('is bounded per view, least recently used out; other views are never cached', async () => {
    await cached.commit(
      'p',
      ['a', 'b', 'c'].map((id, i) => write(id, BigInt(i + 1), { status: id, progress: 0 })),
      3n,
    );
    await cached.commit('q', [{ view: 'users', id: 'u', position: 4n, doc: { name: 'x' } }], 4n);
    await cached.get('tasks', 'a');
    await cached.get('tasks', 'b');
    await cached.get('tasks', 'a'); // a is now the most recently used
    await cached.get('tasks', 'c'); // evicts b
    await cached.get('users', 'u');
    await cached.get('users', 'u');
    expect(cached.cacheStats()).toEqual({ hits: 1, misses: 3, documents: 2 });
    await cached.get('tasks', 'b');
    expect(cached.cacheStats().misses).toBe(4);
  });

  it("kept current by the runner's commits: each read after waitFor shows the event, with the cache warm", async () => {
    const events: EventStore = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
    const runner = createProjectionRunner({ events, views: cached, projections: [progressProjection], log: pino({ level: 'silent' }) });
    await runner.start();
    const meta = { at: new Date().toISOString() };
    let position = (await events.append('task-t1', toNewEvents([submittedEvent('t1')], meta))).position;
    await runner.waitFor(position);
    expect((await cached.get<Doc>('tasks', 't1'))?.doc.progress).toBe(0);
    for (const progress of [10, 20, 30, 40, 50]) {
      position = (await events.append('task-t1', toNewEvents([progressedEvent(progress)], meta))).position;
      await runner.waitFor(position);
      const read: ViewDocument<Doc> | undefined = await cached.get<Doc>('tasks', 't1');
      expect(read?.doc.progress).toBe(progress);
    }
    expect(cached.cacheStats()).toMatchObject({ misses: 1, hits: 5 });
    await runner.stop();
    await events.close();
  });
});
