/**
 * What one append costs on each event store this machine can run: `npx tsx bench/append-cost.ts`
 * (PostgreSQL when POSTGRES_URL is set: `eval "$(bash scripts/postgres-local.sh env)"`). One
 * writer appending one event at a time (the latency of an append, a commit each), then 256 at
 * once (group commits: appends per second and appends per transaction), then the same from 8
 * stores at once, as 8 processes' stores would (every writer behind the same write lock).
 */
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../src/adapters/postgres/event-store.js';
import { createSqliteEventStore } from '../src/adapters/sqlite/event-store.js';
import type { EventStore, NewEvent } from '../src/ports/event-store.js';
import { freshSchema } from '../test/support/postgres.js';
import { tempDir } from '../test/support/tmp.js';
import { pool } from './client.js';

const SEQUENTIAL = 500;
const CONCURRENT = 20_000;

const event = (): NewEvent => ({
  id: randomUUID(),
  type: 'QuotaReserved',
  data: { reservationId: randomUUID(), amount: 10_000, model: 'm' },
  metadata: { at: new Date().toISOString() },
});

async function measure(name: string, open: () => EventStore): Promise<void> {
  const stores = Array.from({ length: 8 }, open);
  const [store] = stores as [EventStore];
  try {
    let started = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await store.append(`s-${i % 50}`, [event()]);
    const sequentialMs = (performance.now() - started) / SEQUENTIAL;
    started = performance.now();
    await pool(CONCURRENT, 256, (i) => store.append(`c-${i % 1000}`, [event()]).then(() => undefined));
    const oneStore = CONCURRENT / ((performance.now() - started) / 1000);
    started = performance.now();
    await pool(CONCURRENT, 256, (i) => stores[i % 8]!.append(`e-${i % 1000}`, [event()]).then(() => undefined));
    const eightStores = CONCURRENT / ((performance.now() - started) / 1000);
    console.log(
      `${name}: ${sequentialMs.toFixed(2)} ms per append one at a time; ${Math.round(oneStore)} appends/s from one store with 256 at once; ${Math.round(eightStores)} appends/s from 8 stores`,
    );
  } finally {
    for (const s of stores) await s.close();
  }
}

const dir = tempDir('append-cost-');
try {
  await measure('SQLite', () => createSqliteEventStore({ path: `${dir.path}/events.sqlite` }));
} finally {
  dir.remove();
}
const url = process.env.POSTGRES_URL?.trim();
if (!url) console.log('PostgreSQL: skipped (POSTGRES_URL not set)');
else {
  const schema = freshSchema(url, 'bench');
  try {
    await measure('PostgreSQL', () => createPostgresEventStore({ url, schema: schema.schema }));
  } finally {
    await schema.drop();
  }
}
