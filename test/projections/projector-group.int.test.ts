/**
 * Projectors as a group (projections/projector-group.ts) on the embedded bus's consumer groups,
 * over SQLite stores: two members split the projections and the singletons between them, every
 * projection folded by exactly one; when one leaves, the other folds everything from the
 * checkpoints, and every view equals what one runner alone makes of the same events. The
 * projections count the events they fold per document, so an event folded twice or not at all
 * shows. A member killed mid-batch is the split-roles test's (test/reliability), on Kafka.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInprocBus } from '../../src/adapters/inproc/bus.js';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import type { BackgroundProcess } from '../../src/lib/background.js';
import type { Bus } from '../../src/ports/bus.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import type { Projection } from '../../projections/projection.js';
import { createProjectorGroup, shardOfProjection, type ProjectorGroup } from '../../projections/projector-group.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { createCheckpointFollower } from '../../projections/follower.js';
import { eventually } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { progressedEvent, submittedEvent } from './support.js';

interface CountDoc {
  folded: number;
  progress: number;
}

/** Each projection counts, per task, the events it folded: a repeat or a loss changes the count. */
const counting = (name: string): Projection<CountDoc> => ({
  name,
  view: `view-${name}`,
  handles: ['TaskSubmitted', 'TaskProgressed'],
  documentId: (e) => e.streamName.slice('task-'.length),
  evolve: (doc, e) => ({ folded: (doc?.folded ?? 0) + 1, progress: e.type === 'TaskProgressed' ? e.data.progress : 0 }),
});

const PROJECTIONS = Array.from({ length: 10 }, (_, i) => counting(`count-${i}`));
const log = pino({ level: 'silent' });

/** A singleton that says whether it runs. */
function singleton(name: string): BackgroundProcess & { running: boolean } {
  const s = {
    name,
    running: false,
    lastPass: () => undefined,
    start: async () => void (s.running = true),
    stop: async () => void (s.running = false),
  };
  return s;
}

let dir: ReturnType<typeof tempDir>;
let events: EventStore;
let views: ViewStore;
let bus: Bus;
const members: ProjectorGroup[] = [];

beforeEach(() => {
  dir = tempDir();
  events = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  bus = createInprocBus({ path: ':memory:' });
});
afterEach(async () => {
  for (const m of members.splice(0)) await m.stop();
  await bus.close();
  await Promise.all([events.close(), views.close()]);
  dir.remove();
});

function member(publisher = singleton('publisher'), failingStarts = 0): ProjectorGroup & { publisher: ReturnType<typeof singleton> } {
  let failures = failingStarts;
  const group = createProjectorGroup({
    bus,
    events,
    projections: PROJECTIONS,
    runnerFor: (owned) => {
      const runner = createProjectionRunner({ events, views, projections: owned, log, batchSize: 7 });
      // A view store that does not answer the first starts (its checkpoints unread).
      if (failures-- <= 0) return runner;
      return { ...runner, start: () => Promise.reject(new Error('the view store did not answer')) };
    },
    singletons: [publisher],
    log,
    clock: () => new Date(),
  });
  members.push(group);
  return Object.assign(group, { publisher });
}

async function appendTasks(from: number, count: number): Promise<void> {
  const metadata = { at: new Date().toISOString() };
  for (let i = from; i < from + count; i++) {
    await events.append(`task-t${i}`, toNewEvents([submittedEvent(`t${i}`)], metadata));
    await events.append(`task-t${i}`, toNewEvents([progressedEvent(10), progressedEvent(60)], metadata));
  }
}

/** Every view as one runner alone makes it of the same events, on a view store of its own. */
async function expectViewsAsOneRunnerMakesThem(): Promise<void> {
  const alone = createSqliteViewStore({ path: `${dir.path}/alone.sqlite` });
  const runner = createProjectionRunner({ events, views: alone, projections: PROJECTIONS, log });
  await runner.start();
  await waitForProjectedHead(events, runner, 10_000);
  await runner.stop();
  try {
    for (const p of PROJECTIONS) {
      const sorted = (docs: { id: string; doc: unknown }[]) => docs.map((d) => [d.id, d.doc]).sort();
      expect(sorted(await views.find(p.view, {})), p.name).toEqual(sorted(await alone.find(p.view, {})));
    }
  } finally {
    await alone.close();
  }
}

/** The group's views at the event store's head: every projection's checkpoint there. */
async function untilViewsReachHead(): Promise<void> {
  const follower = createCheckpointFollower(views, PROJECTIONS, { refreshMs: 20 });
  await follower.start();
  try {
    await waitForProjectedHead(events, follower, 10_000);
  } finally {
    await follower.stop();
  }
}

describe('projectors as a group', () => {
  it('two members split the projections and the singletons; each projection is folded by exactly one', async () => {
    const a = member();
    await a.start();
    expect(a.running().projections).toEqual(PROJECTIONS.map((p) => p.name));
    expect(a.publisher.running).toBe(true);
    await appendTasks(0, 20);

    const b = member();
    await b.start();
    const split = await eventually(async () => {
      const [ra, rb] = [a.running().projections, b.running().projections];
      return ra.length > 0 && rb.length > 0 && ra.length + rb.length === PROJECTIONS.length ? { ra, rb } : undefined;
    }, 5000);
    expect([...split.ra, ...split.rb].sort()).toEqual(PROJECTIONS.map((p) => p.name).sort());
    // Who folds a projection is its shard's owner, the same answer for every member.
    const shardsOfA = new Set(split.ra.map((name) => shardOfProjection(bus, name)));
    for (const name of split.rb) expect(shardsOfA.has(shardOfProjection(bus, name)), name).toBe(false);
    expect([a.publisher.running, b.publisher.running].filter(Boolean)).toHaveLength(1);

    await appendTasks(20, 20);
    await untilViewsReachHead();
    await expectViewsAsOneRunnerMakesThem();
  });

  it('when one member leaves, the other folds everything from the checkpoints, and runs the singleton', async () => {
    const a = member();
    const b = member();
    await a.start();
    await b.start();
    await eventually(async () => (a.running().projections.length > 0 && b.running().projections.length > 0 ? true : undefined), 5000);
    await appendTasks(0, 30);
    await untilViewsReachHead();

    // Events appended while a leaves: b takes its shards over and folds them from their checkpoints.
    const appending = appendTasks(30, 30);
    await a.stop();
    members.splice(members.indexOf(a), 1);
    await appending;
    await eventually(async () => (b.running().projections.length === PROJECTIONS.length ? true : undefined), 5000);
    expect(a.running()).toEqual({ projections: [], singletons: [] });
    expect(a.publisher.running).toBe(false);
    expect(b.publisher.running).toBe(true);
    await untilViewsReachHead();
    await expectViewsAsOneRunnerMakesThem();
  });

  it('a runner whose start failed is started again: an owned shard is never left unfolded, and /readyz shows no pass meanwhile', async () => {
    const a = member(singleton('publisher'), 2);
    await a.start();
    expect(a.lastPass()).toBeUndefined();
    await eventually(async () => (a.running().projections.length === PROJECTIONS.length ? true : undefined), 10_000);
    await appendTasks(0, 10);
    await untilViewsReachHead();
    await expectViewsAsOneRunnerMakesThem();
    expect(a.lastPass()).toBeInstanceOf(Date);
  });
});
