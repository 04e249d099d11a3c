/**
 * Poll from memory where another process projects (projections/follower-view-cache.ts): two
 * handles on the same SQLite files stand for the engine process (its runner commits) and the API
 * process (the checkpoint follower and its cache). Once the follower has reached an event, no
 * cached document misses it; a read that overlapped an invalidation is not cached.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore, ViewWrite } from '../../src/ports/view-store.js';
import type { Projection } from '../../projections/projection.js';
import { createProjectionRunner, type ProjectionRunner } from '../../projections/runner.js';
import { createCheckpointFollower } from '../../projections/follower.js';
import { withFollowerViewCache, type FollowerViewCache } from '../../projections/follower-view-cache.js';
import { tempDir } from '../support/tmp.js';
import { progressedEvent, progressProjection, submittedEvent, type ProgressDoc } from './support.js';

type Doc = ProgressDoc;
const projection = progressProjection;
const submitted = submittedEvent;
const progressed = progressedEvent;

/** A watched view: its changes are told to the follower's listeners, with the stored document. */
const models: Projection<{ tasks: number }> = {
  name: 'models',
  view: 'models',
  handles: ['TaskSubmitted'],
  documentId: (e) => (e.type === 'TaskSubmitted' ? e.data.model : undefined),
  evolve: (doc) => ({ tasks: (doc?.tasks ?? 0) + 1 }),
};
const meta = { at: new Date().toISOString() };

let dir: ReturnType<typeof tempDir>;
let engineEvents: EventStore;
let engineViews: ViewStore;
let engine: ProjectionRunner;
let apiEvents: EventStore;
let apiViews: ViewStore;
let cache: FollowerViewCache;
let follower: ProjectionRunner;

beforeEach(async () => {
  dir = tempDir();
  engineEvents = createSqliteEventStore({ path: `${dir.path}/events.sqlite`, pollIntervalMs: 5 });
  engineViews = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  engine = createProjectionRunner({ events: engineEvents, views: engineViews, projections: [projection, models], log: pino({ level: 'silent' }) });
  await engine.start();
  apiEvents = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  apiViews = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  cache = withFollowerViewCache(apiViews, apiEvents, { cached: [projection], watched: [models] }, 3);
  // A background look once an hour: each test moves the follower itself, by waitFor.
  follower = createCheckpointFollower(cache, [projection, models], { everyMs: 2, refreshMs: 3_600_000, beforeAdvance: cache.invalidate });
  await follower.start();
});
afterEach(async () => {
  await follower.stop();
  await engine.stop();
  for (const store of [apiEvents, apiViews, engineEvents, engineViews]) await store.close();
  dir.remove();
});

async function append(taskId: string, event: DomainEvent): Promise<bigint> {
  return (await engineEvents.append(`task-${taskId}`, toNewEvents([event], meta))).position;
}

describe('follower view cache', () => {
  it('once the follower reaches an event, the cached document shows it; until then it may be one look behind, never older', async () => {
    let position = await append('t1', submitted('t1'));
    await follower.waitFor(position);
    expect((await cache.get<Doc>('tasks', 't1'))?.doc.progress).toBe(0);
    for (const progress of [10, 20, 30]) {
      position = await append('t1', progressed(progress));
      await engine.waitFor(position);
      // The engine has committed; the follower has not looked: the cache answers what it had.
      expect((await cache.get<Doc>('tasks', 't1'))?.doc.progress).toBe(progress - 10 || 0);
      await follower.waitFor(position);
      expect((await cache.get<Doc>('tasks', 't1'))?.doc.progress).toBe(progress);
      expect(await cache.get('tasks', 't1')).toEqual(await engineViews.get('tasks', 't1'));
    }
    // Events of other tasks drop nothing of this one.
    position = await append('t2', submitted('t2'));
    await follower.waitFor(position);
    const before = cache.cacheStats().hits;
    await cache.get('tasks', 't1');
    expect(cache.cacheStats().hits).toBe(before + 1);
  });

  it('a read that overlapped an invalidation is not cached', async () => {
    let position = await append('t1', submitted('t1'));
    await follower.waitFor(position);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: ViewStore = {
      ...apiViews,
      get: async <T>(view: string, id: string) => {
        const old = await apiViews.get<T>(view, id);
        await gate;
        return old;
      },
    };
    const racing = withFollowerViewCache(slow, apiEvents, { cached: [projection] });
    const reading = racing.get<Doc>('tasks', 't1');
    const from = position;
    position = await append('t1', progressed(40));
    await engine.waitFor(position);
    await racing.invalidate(from, position);
    release();
    expect((await reading)?.doc.progress).toBe(0); // the read itself began before the engine's commit
    expect(racing.cacheStats().documents).toBe(0); // and was not kept
  });

  it('tells its listeners what changed in the watched views, with the stored documents, before it reaches the events', async () => {
    const told: ViewWrite[][] = [];
    follower.onCommit((writes) => told.push([...writes]));
    await append('t1', submitted('t1'));
    const position = await append('t2', submitted('t2'));
    await engine.waitFor(position);
    expect(told).toEqual([]);
    await follower.waitFor(position);
    expect(told).toEqual([[{ view: 'models', id: 'm', position, doc: { tasks: 2 } }]]);
    // Progress changes no watched document: nothing more is told.
    const later = await append('t1', progressed(10));
    await follower.waitFor(later);
    expect(told).toHaveLength(1);
  });

  it('reads a long step in pages', async () => {
    const first = await append('t1', submitted('t1'));
    await follower.waitFor(first);
    await cache.get('tasks', 't1');
    let last = first;
    for (let batch = 0; batch < 3; batch++) {
      const events = Array.from({ length: 1000 }, () => progressed(batch));
      last = (await engineEvents.append('task-t1', toNewEvents(events, meta))).position;
    }
    await engine.waitFor(last);
    await follower.waitFor(last);
    expect((await cache.get<Doc>('tasks', 't1'))?.doc.progress).toBe(2);
  });

  it('is bounded per view, least recently used out', async () => {
    let position = 0n;
    for (const id of ['a', 'b', 'c', 'd']) position = await append(id, submitted(id));
    await follower.waitFor(position);
    for (const id of ['a', 'b', 'c', 'd']) await cache.get('tasks', id);
    expect(cache.cacheStats().documents).toBe(3);
  });
});
