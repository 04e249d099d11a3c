import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteEventStore, type SqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import { tempDir } from '../support/tmp.js';
import { eventStoreContract } from './event-store.contract.js';
import { expectNothingMore, ids, newEvent, newEvents, pullEvents, uniquePrefix } from './event-store.fixtures.js';

eventStoreContract('sqlite', async () => {
  const dir = tempDir('sqlite-es-');
  const store = createSqliteEventStore({ path: join(dir.path, 'events.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      dir.remove();
    },
  };
});

async function withStores<T>(count: number, run: (stores: SqliteEventStore[]) => Promise<T>, pollIntervalMs = 50): Promise<T> {
  const dir = tempDir('sqlite-es-');
  const path = join(dir.path, 'events.db');
  const stores = Array.from({ length: count }, () => createSqliteEventStore({ path, pollIntervalMs }));
  try {
    return await run(stores);
  } finally {
    for (const store of stores) await store.close();
    dir.remove();
  }
}

describe('SQLite event store', () => {
  it('refuses an append one of whose later ids is stored (in its stream or another: ids are unique in the file), writing none of it, and the appends of the same commit beside it are unharmed', async () => {
    await withStores(1, async ([store]) => {
      const [stream, other] = [`${uniquePrefix()}a`, `${uniquePrefix()}b`];
      const [a, b] = [newEvent(), newEvent()];
      await store!.append(stream, [a, b], { expectedRevision: 'no_stream' });
      for (const [target, expectedRevision] of [
        [stream, 'any'],
        [stream, 1],
        [other, 'no_stream'],
      ] as const) {
        const fresh = newEvent();
        // Queued in the same tick: one group commit, each append in its own savepoint.
        const [refused, beside] = await Promise.allSettled([
          store!.append(target, [fresh, b], { expectedRevision }),
          store!.append(`${uniquePrefix()}c`, newEvents(1), { expectedRevision: 'no_stream' }),
        ]);
        expect(refused.status === 'rejected' && refused.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect(beside.status).toBe('fulfilled');
        // The fresh event went with the refusal: its id is free.
        await expect(store!.append(`${uniquePrefix()}d`, [fresh], { expectedRevision: 'no_stream' })).resolves.toMatchObject({ nextExpectedRevision: 0 });
      }
      expect(ids(await store!.readStream(stream))).toEqual(ids([a, b]));
      expect(await store!.readStream(other)).toEqual([]);
    });
  });

  it('reports head position 0 on an empty file', async () => {
    await withStores(1, async ([store]) => {
      expect(await store!.headPosition()).toBe(0n);
      expect(await store!.readAll()).toEqual([]);
    });
  });

  it('a second store on the same file (another process) sees appends through its subscription by polling', async () => {
    await withStores(2, async ([writer, reader]) => {
      const prefix = uniquePrefix();
      await writer!.append(`${prefix}a`, newEvents(2));
      const subscription = reader!.subscribe({ streamPrefixes: [prefix] });
      const iterator = subscription[Symbol.asyncIterator]();
      expect((await pullEvents(iterator, 2)).events).toHaveLength(2);

      const live = newEvents(3);
      const arriving = pullEvents(iterator, 3, 2000);
      await writer!.append(`${prefix}b`, live);
      expect(ids((await arriving).events)).toEqual(ids(live));
      await expectNothingMore(subscription, iterator);
    });
  });

  it('wakes a live subscription on an append in this process without waiting for the poll', async () => {
    await withStores(
      1,
      async ([store]) => {
        const subscription = store!.subscribe();
        const iterator = subscription[Symbol.asyncIterator]();
        const arriving = pullEvents(iterator, 1, 1000);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const started = Date.now();
        await store!.append('task-1', newEvents(1));
        await arriving;
        expect(Date.now() - started).toBeLessThan(500);
        await subscription.close();
      },
      60_000,
    );
  });

  it('commits 500 parallel appends to different streams in one batch with unique, contiguous positions', async () => {
    await withStores(1, async ([store]) => {
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, index) => store!.append(`task-${index}`, [newEvent('TaskSubmitted', { index })], { expectedRevision: 'no_stream' })),
      );
      const positions = results.map((result) => result.position).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(positions).toEqual(Array.from({ length: 500 }, (_, index) => BigInt(index + 1)));
      expect(await store!.headPosition()).toBe(500n);
      expect(store!.groupCommitStats()).toEqual({ transactions: 1, appends: 500 });
    });
  });

  it('rejects only the failing append of a batch and keeps the others of the same batch', async () => {
    await withStores(1, async ([store]) => {
      await store!.append('account-1', newEvents(1));
      const outcomes = await Promise.allSettled([
        store!.append('task-a', newEvents(1), { expectedRevision: 'no_stream' }),
        store!.append('account-1', newEvents(1), { expectedRevision: 'no_stream' }),
        store!.append('task-b', newEvents(2), { expectedRevision: 'no_stream' }),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await store!.readAll()).toHaveLength(4);
    });
  });

  it('applies appends to one stream queued in the same tick in call order', async () => {
    await withStores(1, async ([store]) => {
      const batches = [newEvents(2), newEvents(1), newEvents(3)];
      const results = await Promise.all([
        store!.append('task-1', batches[0]!, { expectedRevision: 'no_stream' }),
        store!.append('task-1', batches[1]!, { expectedRevision: 1 }),
        store!.append('task-1', batches[2]!, { expectedRevision: 2 }),
      ]);
      expect(results.map((result) => result.nextExpectedRevision)).toEqual([1, 2, 5]);
      expect(ids(await store!.readStream('task-1'))).toEqual(ids(batches.flat()));
    });
  });

  it('keeps acknowledged events after the file is closed and reopened', async () => {
    const dir = tempDir('sqlite-es-');
    const path = join(dir.path, 'events.db');
    try {
      const first = createSqliteEventStore({ path });
      const events = newEvents(3);
      await first.append('task-1', events);
      await first.close();
      const reopened = createSqliteEventStore({ path });
      expect(ids(await reopened.readStream('task-1'))).toEqual(ids(events));
      await reopened.close();
    } finally {
      dir.remove();
    }
  });

  it('rejects an append that repeats an event id within itself, and appends after close', async () => {
    await withStores(1, async ([store]) => {
      const event = newEvent();
      await expect(store!.append('task-1', [event, event])).rejects.toThrow(/twice/);
      await store!.close();
      await expect(store!.append('task-1', newEvents(1))).rejects.toThrow(/closed/);
    });
  });
});
