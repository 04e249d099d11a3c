/**
 * The processor of partitioned engines (owned-processor.ts) on a real SQLite event store and view
 * store: where a partition is resumed from, and what is handled when partitions are gained.
 * Task `t<p>-<n>` belongs to partition p.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { createOwnedProcessor, type OwnedProcessor } from '../../src/engine/dispatch/owned-processor.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { useTempEventStore } from '../support/temp-event-store.js';
import { tempDir } from '../support/tmp.js';

let events: EventStore;
useTempEventStore((s) => (events = s));
let views: ViewStore;
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
  views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
});
let running: OwnedProcessor | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await views.close();
  dir.remove();
});

/** Ends task `t<partition>-<n>`; resolves with the event's position. */
async function end(partition: number, n: number): Promise<bigint> {
  const r = await events.append(`task-t${partition}-${n}`, [
    { id: `end-${partition}-${n}`, type: 'TaskFailed', data: { code: 'timeout' }, metadata: { at: new Date().toISOString() } },
  ]);
  return r.position;
}

/** A started processor owning `owned`, recording the tasks it handles. */
async function processor(owned: Set<number>, handled: string[]): Promise<OwnedProcessor> {
  const p = createOwnedProcessor({
    name: 'test',
    events,
    views,
    log: pino({ level: 'silent' }),
    handles: ['TaskFailed'],
    streamPrefixes: ['task-'],
    ownership: { ownsPartition: (partition) => owned.has(partition) },
    partitionOf: (e) => Number(/^task-t(\d+)-/.exec(e.streamName)![1]),
    handle: async (e) => void handled.push(e.streamName.slice('task-'.length)),
    clock: () => new Date(),
  });
  await p.start();
  running = p;
  return p;
}

describe('a processor with a checkpoint per owned partition', () => {
  it('resumes a partition it never stored from the one checkpoint the processor kept before (an upgrade repeats and skips nothing)', async () => {
    await end(0, 1);
    const before = await end(1, 1);
    await end(0, 2);
    await end(1, 2);
    // Where the processor stood when it kept one checkpoint.
    await views.commit('processor:test', [], before);

    const handled: string[] = [];
    const owned = new Set([0, 1]);
    const p = await processor(owned, handled);
    await p.assigned([0, 1]);
    await p.caughtUp(await events.headPosition());
    expect(handled.sort()).toEqual(['t0-2', 't1-2']);
    await p.stop();
    // Each partition's own position is stored now.
    expect(await views.getCheckpoint('processor:test:p0')).toBe(await events.headPosition());
  });

  it('a partition gained later is handled from its own position, and those already owned are not handled again', async () => {
    await end(0, 1);
    await end(1, 1);
    const handled: string[] = [];
    const owned = new Set([0]);
    const p = await processor(owned, handled);
    await p.assigned([0]);
    await p.caughtUp(await events.headPosition());
    await end(0, 2);
    await p.caughtUp(await events.headPosition());
    expect(handled.sort()).toEqual(['t0-1', 't0-2']);

    // Partition 1, never handled by anyone, is gained while the subscription waits at the head.
    owned.add(1);
    await p.assigned([1]);
    await p.caughtUp(await events.headPosition());
    expect(handled.sort()).toEqual(['t0-1', 't0-2', 't1-1']);
  });

  it('a revoked partition is no longer handled, and its stored position stays below what it did not handle', async () => {
    const handled: string[] = [];
    const owned = new Set([0, 1]);
    const p = await processor(owned, handled);
    await p.assigned([0, 1]);
    await end(1, 1);
    await p.caughtUp(await events.headPosition());
    const handledUpTo = await events.headPosition();

    owned.delete(1);
    p.revoked([1]);
    await end(1, 2);
    await end(0, 1);
    await p.caughtUp(await events.headPosition());
    expect(handled.sort()).toEqual(['t0-1', 't1-1']);
    await p.stop();
    expect(await views.getCheckpoint('processor:test:p1')).toBe(handledUpTo);
  });
});
