/**
 * The shared EventStore contract against a real PostgreSQL server (POSTGRES_URL, started in CI
 * by scripts/postgres-local.sh, or a container), each store on a fresh schema. Then what is
 * PostgreSQL's own: a second store (another process's) woken by LISTEN/NOTIFY well before its
 * poll, contiguous positions for a burst of parallel appends, and a slow transaction holding
 * the write lock: the appends behind it wait, and no reader skips past it; the server ending
 * the store's connections under load, and a server that cannot be reached (StoreUnavailableError).
 */
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { applicationName } from '../../src/adapters/postgres/database.js';
import { createPostgresEventStore } from '../../src/adapters/postgres/event-store.js';
import { StoreUnavailableError } from '../../src/ports/store-unavailable.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { contractTarget, useBackend } from '../support/containers.js';
import { eventually } from '../support/gateway.js';
import { freshSchema } from '../support/postgres.js';
import { eventStoreContract } from './event-store.contract.js';
import { ids, newEvent, newEvents, pullEvents, uniquePrefix } from './event-store.fixtures.js';

const target = contractTarget('postgres', 'PostgreSQL event store');
vi.setConfig({ testTimeout: 60_000 });

describe.skipIf(!target.available)(target.title, () => {
  const url = useBackend(target, 'PostgreSQL');

  eventStoreContract('PostgreSQL', async () => {
    const schema = freshSchema(url(), 'es');
    const store = createPostgresEventStore({ url: url(), schema: schema.schema, pollIntervalMs: 200 });
    return {
      store,
      async cleanup() {
        await store.close();
        await schema.drop();
      },
    };
  });

  async function withStores<T>(count: number, run: (stores: EventStore[], schema: string) => Promise<T>, pollIntervalMs = 60_000): Promise<T> {
    const schema = freshSchema(url(), 'es');
    const stores = Array.from({ length: count }, () => createPostgresEventStore({ url: url(), schema: schema.schema, pollIntervalMs }));
    try {
      return await run(stores, schema.schema);
    } finally {
      for (const store of stores) await store.close();
      await schema.drop();
    }
  }

  describe('PostgreSQL event store', () => {
    it("a second store on the same schema (another process) is woken by the first one's commit, not by its poll", async () => {
      await withStores(2, async ([writer, reader]) => {
        const prefix = uniquePrefix();
        const subscription = reader!.subscribe({ streamPrefixes: [prefix] });
        const iterator = subscription[Symbol.asyncIterator]();
        // The reader's listening connection is open once its first read has run.
        await writer!.append(`${prefix}a`, newEvents(1));
        expect((await pullEvents(iterator, 1, 10_000)).events).toHaveLength(1);

        const started = Date.now();
        const live = newEvents(3);
        const arriving = pullEvents(iterator, 3, 10_000);
        await writer!.append(`${prefix}b`, live);
        expect(ids((await arriving).events)).toEqual(ids(live));
        // The poll is a minute away: only the notification can have woken it.
        expect(Date.now() - started).toBeLessThan(5_000);
        await subscription.close();
      });
    });

    it('500 parallel appends to different streams get unique, contiguous positions', async () => {
      await withStores(1, async ([store]) => {
        const results = await Promise.all(
          Array.from({ length: 500 }, (_, index) => store!.append(`task-${index}`, [newEvent('TaskSubmitted', { index })], { expectedRevision: 'no_stream' })),
        );
        const positions = results.map((result) => result.position).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(positions).toEqual(Array.from({ length: 500 }, (_, index) => BigInt(index + 1)));
        expect(await store!.headPosition()).toBe(500n);
      });
    });

    it('a slow transaction holding the write lock: appends behind it wait, and a reader never skips past it', async () => {
      await withStores(
        2,
        async ([writer, reader], schema) => {
          await writer!.append('before', newEvents(1));
          const slow = new pg.Client({ connectionString: url(), options: `-c search_path=${schema}` });
          await slow.connect();
          try {
            // What an append transaction of another process does, held open half a second.
            await slow.query('BEGIN');
            await slow.query('SELECT position FROM event_head FOR UPDATE');
            await slow.query(
              `INSERT INTO events (position, stream, revision, event_id, type, data, metadata) VALUES (2, 'slow', 0, 'slow-event', 'Slow', '{}', '{"at":"2024-01-01T00:00:00.000Z"}')`,
            );
            await slow.query('UPDATE event_head SET position = 2');
            const behind = writer!.append('behind', newEvents(1));
            const subscription = reader!.subscribe({ after: 1n });
            const iterator = subscription[Symbol.asyncIterator]();
            const pulled = pullEvents(iterator, 2, 10_000);
            await new Promise((resolve) => setTimeout(resolve, 500));
            expect(await reader!.headPosition()).toBe(1n);
            await slow.query('COMMIT');
            expect((await behind).position).toBe(3n);
            const { events } = await pulled;
            expect(events.map((e) => [e.streamName, e.position])).toEqual([
              ['slow', 2n],
              ['behind', 3n],
            ]);
            await subscription.close();
          } finally {
            await slow.end();
          }
        },
        100,
      );
    });

    it('the server ending its connections under a burst of appends: each append lands or fails as StoreUnavailableError, the process lives on, and the store goes on', async () => {
      await withStores(
        1,
        async ([store], schema) => {
          const subscription = store!.subscribe();
          const iterator = subscription[Symbol.asyncIterator]();
          await store!.append('first', newEvents(1));
          await pullEvents(iterator, 1, 10_000);
          const admin = new pg.Client({ connectionString: url(), options: `-c search_path=${schema}` });
          await admin.connect();
          try {
            // The write lock held elsewhere, so the burst's transactions are certainly in flight
            // (waiting for it) when the server ends every connection of the store, its pool's
            // and its LISTEN one, as a restart or failover does.
            await admin.query('BEGIN');
            await admin.query('SELECT position FROM event_head FOR UPDATE');
            // Settled as they go: a rejection before the test looks is not an unhandled one.
            const settled = Promise.allSettled(Array.from({ length: 200 }, (_, index) => store!.append(`burst-${index % 7}`, [newEvent('Burst', { index })])));
            const mine = [applicationName(schema)];
            await eventually(
              async () =>
                (await admin.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", mine)).rowCount
                  ? true
                  : undefined,
              10_000,
              20,
            );
            await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', mine);
            await admin.query('ROLLBACK');
            const outcomes = await settled;
            const failures = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as unknown);
            expect(failures.length, 'appends met a terminated connection').toBeGreaterThan(0);
            for (const failure of failures) expect(failure).toBeInstanceOf(StoreUnavailableError);
            const landed = outcomes.filter((o) => o.status === 'fulfilled').length;

            // New connections: appends work, and the subscription goes on with no gap, every
            // landed event once (an append cut off at its commit may have landed unanswered).
            await store!.append('after', newEvents(1));
            const head = await store!.headPosition();
            const { events } = await pullEvents(iterator, Number(head) - 1, 20_000);
            expect(events.map((e) => e.position)).toEqual(Array.from({ length: Number(head) - 1 }, (_, i) => BigInt(i + 2)));
            expect(events.filter((e) => e.type === 'Burst').length).toBeGreaterThanOrEqual(landed);
            await subscription.close();
          } finally {
            await admin.end();
          }
        },
        200,
      );
    });

    it('a server that cannot be reached: every call fails as StoreUnavailableError', async () => {
      const store = createPostgresEventStore({ url: 'postgres://gateway@127.0.0.1:1/gateway', schema: 'unreachable' });
      try {
        await expect(store.append('x', newEvents(1))).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.readStream('x')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.ping()).rejects.toThrow(/^PostgreSQL is unavailable: /);
      } finally {
        await store.close();
      }
    });
  });
});
