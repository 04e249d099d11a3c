/**
 * What the order of ids costs the SQLite event store: `npx tsx bench/id-order.ts [events]`.
 * A store is filled with `events` (default 300,000) events of new task streams, then 40,000
 * more are appended, 64 at once (a submit's task stream each), twice over: with random ids
 * (version 4 event ids, task ids random throughout, as before decision 0162) and with the
 * gateway's own time-ordered ones (`newEventId`, `newTaskId`), each in a fresh store, alternated.
 * Prints appends per second, CPU per append and the bytes the process wrote to the disk per
 * append (`/proc/self/io`: the WAL and its checkpoints).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSqliteEventStore } from '../src/adapters/sqlite/event-store.js';
import { newEventId, newId, newTaskId } from '../src/domain/ids.js';
import type { NewEvent } from '../src/ports/event-store.js';
import { tempDir } from '../test/support/tmp.js';
import { pool } from './client.js';

const FILL = Number(process.argv[2] ?? 300_000);
const APPENDS = 40_000;
const ROUNDS = 2;

interface Ids {
  event(): string;
  task(): string;
}
const LAYOUTS: Record<string, Ids> = {
  random: { event: randomUUID, task: () => newId('task') },
  'time-ordered': { event: newEventId, task: newTaskId },
};

const writtenBytes = () => Number(/write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN);

async function measure(name: string, ids: Ids): Promise<void> {
  const dir = tempDir('id-order-');
  const store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  const event = (type: string, taskId: string): NewEvent => ({
    id: ids.event(),
    type,
    data: { taskId, model: 'anime-diffusion-4-5-full', request: { prompt: 'bench' }, reserved: 10_000 },
    metadata: { at: new Date().toISOString(), correlationId: randomUUID() },
  });
  const submit = async () => {
    const taskId = ids.task();
    await store.append(`task-${taskId}`, [event('TaskSubmitted', taskId)]);
  };
  try {
    await pool(FILL, 128, submit);
    const bytes = writtenBytes();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await pool(APPENDS, 64, submit);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    console.log(
      `${name.padEnd(12)} ${Math.round(APPENDS / seconds)} appends/s, ${((used.user + used.system) / 1000 / APPENDS).toFixed(3)} ms of CPU and ${((writtenBytes() - bytes) / 1024 / APPENDS).toFixed(1)} KiB written per append`,
    );
  } finally {
    await store.close();
    dir.remove();
  }
}

console.log(`${FILL} events first, then ${APPENDS} appends 64 at once; ${ROUNDS} rounds`);
for (let round = 0; round < ROUNDS; round++) for (const [name, ids] of Object.entries(LAYOUTS)) await measure(name, ids);
