/**
 * Ownership changes during a rebalance, on two task engines sharing one gateway's store (SQLite),
 * views and simulator. Their ownership is the real one (createOwnership) over a bus whose group
 * the test scripts the way kafkajs behaves: rebalance listeners run one after another and nobody
 * waits for them, so both engines can own a partition at once. What must hold whatever the bus
 * does: a task is submitted upstream once (the submit lease on its stream), it completes and is
 * charged once, and work of a revoked partition stops (polls aborted, adoption abandoned).
 */
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitForProjectedHead } from '../../projections/head.js';
import { createOwnership, type Ownership } from '../../src/engine/dispatch/ownership.js';
import { outboundPolicy } from '../../src/engine/outbound/outbound-guard.js';
import { createTaskEngine, type TaskEngine, type TaskEngineDeps } from '../../src/engine/dispatch/task-engine.js';
import { withOverrides } from '../support/event-store-overrides.js';
import type { UpstreamAdapter } from '../../src/engine/channels/upstream.js';
import { wrappedUpstreams } from '../support/wrapped-upstreams.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';
import { scriptedGroupBus, type ScriptedMember } from '../support/scripted-group-bus.js';

/** What one engine's upstream calls did, per task. */
interface Seen {
  submits: string[];
  polls: { engine: string; at: number }[];
  abortedPolls: { engine: string; at: number }[];
}
const seen = new Map<string, Seen>();
const of = (taskId: string) => seen.get(taskId) ?? (seen.set(taskId, { submits: [], polls: [], abortedPolls: [] }), seen.get(taskId)!);

interface Behaviour {
  /** Each submit answers this much later (the overlap needs submits in flight). */
  submitDelayMs: number;
  /** Polls hang until their signal aborts (at most 3 s, then they go on). */
  hangPolls: boolean;
}

/** The real adapters (simulator), observed per engine and slowed as `behaviour` says. */
function observed(engine: string, behaviour: Behaviour): Map<string, UpstreamAdapter> {
  return wrappedUpstreams((a) => ({
    submit: async (ctx) => {
      of(ctx.task.taskId).submits.push(engine);
      await new Promise((r) => setTimeout(r, behaviour.submitDelayMs));
      return a.submit(ctx);
    },
    poll: async (ctx) => {
      const task = of(ctx.task.taskId);
      task.polls.push({ engine, at: Date.now() });
      if (behaviour.hangPolls) {
        await new Promise<void>((resolve, reject) => {
          const gaveUp = setTimeout(resolve, 3000);
          ctx.signal?.addEventListener(
            'abort',
            () => {
              clearTimeout(gaveUp);
              task.abortedPolls.push({ engine, at: Date.now() });
              reject(new Error('poll aborted'));
            },
            { once: true },
          );
        });
      }
      return a.poll(ctx);
    },
  }));
}

/** The engines' log lines (info and up), to see which dispatch a lease turned away. */
const logged: { engine: string; msg: string; taskId?: string }[] = [];
const leftToAnother = (taskId: string) => logged.filter((l) => l.taskId === taskId && l.msg.startsWith('another instance is submitting this task'));

let gw: TestGateway;
let api: Client;
let accountId: string;
let running: TaskEngine[] = [];

interface Instance {
  engine: TaskEngine;
  ownership: Ownership;
  member: ScriptedMember;
  behaviour: Behaviour;
}

/** A started engine whose group membership the test scripts (it owns nothing yet). */
async function instance(
  name: string,
  options: Partial<Behaviour> & { viewsReachHead?: () => Promise<void>; events?: TaskEngineDeps['events'] } = {},
): Promise<Instance> {
  const deps = gw.gateway.deps;
  const group = scriptedGroupBus(deps.bus);
  const ownership = createOwnership(group.bus, 'rebalance-test');
  const behaviour: Behaviour = { submitDelayMs: options.submitDelayMs ?? 0, hangPolls: options.hangPolls ?? false };
  const engine = createTaskEngine({
    ...deps,
    ...(options.events ? { events: options.events } : {}),
    upstreams: observed(name, behaviour),
    log: pino({ level: 'info' }, { write: (line: string) => void logged.push({ engine: name, ...(JSON.parse(line) as { msg: string; taskId?: string }) }) }),
    assetRetentionSeconds: 3600,
    channelConcurrency: 16,
    pollIntervalMs: 30,
    ownership,
    partitioned: true,
    viewsReachHead: options.viewsReachHead ?? (() => waitForProjectedHead(deps.events, deps.runner, 10_000)),
    outbound: (base) => outboundPolicy(deps.config, deps.selfUrl(), [base]),
  });
  await engine.start();
  running.push(engine);
  return { engine, ownership, member: group.members[0]!, behaviour };
}

const everyPartition = () => Array.from({ length: gw.gateway.deps.bus.partitions }, (_, p) => p);

async function submitTasks(n: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `${label} ${i}` });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body.id as string);
  }
  return ids;
}

/** Every task completed, with one UpstreamSubmitted and one upstream submit each. */
async function expectEachSubmittedOnceAndCompleted(ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const done = await waitForImageTask(api, id, 20_000);
    expect(done.status, id).toBe('completed');
  }
  for (const id of ids) {
    expect(of(id).submits, `upstream submits of ${id}`).toHaveLength(1);
    const stream = (await gw.gateway.deps.events.readStream(`task-${id}`)).map((e) => e.type);
    expect(
      stream.filter((t) => t === 'UpstreamSubmitted'),
      id,
    ).toHaveLength(1);
    expect(
      stream.filter((t) => t === 'TaskSucceeded'),
      id,
    ).toHaveLength(1);
  }
}

async function expectChargedOnce(expected: number): Promise<void> {
  const { events } = gw.gateway.deps;
  const head = await events.headPosition();
  for (const e of running) await e.settler.caughtUp(head);
  expect(await expectEachReservationClosedOnce(gw, accountId)).toBe(expected);
}

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '30' });
  // The gateway's own engine steps aside: the test's engines share its store, views and simulator.
  await gw.gateway.engine.stop();
  const user = await newUser(await adminClient(gw), { credit: 100_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
});
/** Lets go of what a failed test may still hold (A's stop waits for its adoption). */
let onTeardown = () => undefined as void;
afterEach(async () => {
  onTeardown();
  await Promise.all(running.map((e) => e.stop()));
  running = [];
});
afterAll(() => gw.close());

describe('ownership during a rebalance', () => {
  let closed = 0;

  it('both engines own every partition at once: each task is submitted upstream once, completes, and is charged once', async () => {
    const a = await instance('A', { submitDelayMs: 500 });
    const b = await instance('B', { submitDelayMs: 500 });
    await a.member.assign(everyPartition());
    await b.member.assign(everyPartition());
    expect(a.ownership.ownsPartition(0) && b.ownership.ownsPartition(0)).toBe(true);

    const ids = await submitTasks(6, 'both own');
    await expectEachSubmittedOnceAndCompleted(ids);
    // Both engines dispatched every task (the overlap really happened); the lease turned one away.
    for (const id of ids) {
      const submitter = of(id).submits[0];
      expect(
        leftToAnother(id).map((l) => l.engine),
        id,
      ).toContain(submitter === 'A' ? 'B' : 'A');
      const claims = (await gw.gateway.deps.events.readStream(`task-${id}`)).filter((e) => e.type === 'UpstreamSubmitClaimed');
      expect(claims, id).toHaveLength(1);
    }
    closed += ids.length;
    await expectChargedOnce(closed);
  }, 40_000);

  it("partitions move while the old owner's submits are in flight: those finish and are recorded, the new owner submits nothing again", async () => {
    const a = await instance('A', { submitDelayMs: 600 });
    const b = await instance('B');
    await a.member.assign(everyPartition());
    const ids = await submitTasks(5, 'moved mid-submit');
    await eventually(async () => (ids.every((id) => of(id).submits.length === 1) ? true : undefined));

    // The new owner is assigned before the old one has let go (kafkajs does not wait for it):
    // B adopts the tasks while A's submits are still under way.
    await b.member.assign(everyPartition());
    await a.member.revoke(everyPartition());
    expect(a.ownership.ownsPartition(0)).toBe(false);

    await expectEachSubmittedOnceAndCompleted(ids);
    for (const id of ids) expect(of(id).submits, id).toEqual(['A']);
    // A recorded its submits but follows none of them: B polls them to completion.
    for (const id of ids)
      expect(
        of(id).polls.map((p) => p.engine),
        id,
      ).not.toContain('A');
    closed += ids.length;
    await expectChargedOnce(closed);
  }, 40_000);

  it("a revoked partition's polls stop at once: a poll under way is aborted and records nothing, the new owner finishes the task", async () => {
    const a = await instance('A', { hangPolls: true });
    const b = await instance('B');
    await a.member.assign(everyPartition());
    const ids = await submitTasks(3, 'polled when revoked');
    await eventually(async () => (ids.every((id) => of(id).polls.some((p) => p.engine === 'A')) ? true : undefined));

    await b.member.assign(everyPartition());
    const revokedAt = Date.now();
    await a.member.revoke(everyPartition());
    for (const id of ids) {
      const aborted = await eventually(async () => of(id).abortedPolls.find((p) => p.engine === 'A'), 1000, 10);
      expect(aborted.at - revokedAt, id).toBeLessThan(500);
    }
    await expectEachSubmittedOnceAndCompleted(ids);
    for (const id of ids) {
      expect(
        of(id).polls.filter((p) => p.engine === 'A' && p.at > revokedAt),
        id,
      ).toEqual([]);
      expect(
        of(id).polls.some((p) => p.engine === 'B'),
        id,
      ).toBe(true);
    }
    closed += ids.length;
    await expectChargedOnce(closed);
  }, 40_000);

  it('an adoption under way when its partitions are revoked is abandoned, and the revoke does not wait for it', async () => {
    let release!: () => void;
    const viewsCaughtUp = new Promise<void>((r) => (release = r));
    const deps = gw.gateway.deps;
    // A's views catch up only when the test says so: its adoption hangs there.
    const a = await instance('A', { viewsReachHead: () => viewsCaughtUp.then(() => waitForProjectedHead(deps.events, deps.runner, 10_000)) });
    const b = await instance('B');
    // Nobody owns the tasks yet: they wait, submitted.
    const ids = await submitTasks(3, 'adopted when revoked');

    onTeardown = release;
    void a.member.assign(everyPartition());
    const revoked = a.member.revoke(everyPartition());
    // The revoke applies though the adoption is still waiting for the views.
    const first = await Promise.race([revoked.then(() => 'revoked'), new Promise((r) => setTimeout(() => r('still waiting'), 1000))]);
    expect(first).toBe('revoked');
    expect(a.ownership.ownsPartition(0)).toBe(false);

    // A's adoption goes on now, owning nothing: it takes over nothing.
    release();
    await new Promise((r) => setTimeout(r, 500));
    for (const id of ids) expect(of(id).submits, id).toEqual([]);

    await b.member.assign(everyPartition());
    await expectEachSubmittedOnceAndCompleted(ids);
    for (const id of ids) {
      expect(of(id).submits, id).toEqual(['B']);
      expect(
        of(id).polls.map((p) => p.engine),
        id,
      ).not.toContain('A');
    }
    closed += ids.length;
    await expectChargedOnce(closed);
  }, 40_000);

  it('a task whose adoption was reading it when its partition was revoked is not polled by the old owner', async () => {
    const deps = gw.gateway.deps;
    // B's polls hang (until its revoke aborts them): the tasks stay unfinished, dispatched.
    const b = await instance('B', { hangPolls: true });
    await b.member.assign(everyPartition());
    const ids = await submitTasks(2, 'adopted while revoked');
    await eventually(async () => (ids.every((id) => of(id).polls.length > 0) ? true : undefined));
    // A reads task streams only when the test says so: its adoption waits in that read.
    let release!: () => void;
    const reads = new Promise<void>((r) => (release = r));
    let held = 0;
    const events = withOverrides(deps.events, {
      readStream: async (stream, options) => {
        if (stream.startsWith('task-')) {
          held++;
          await reads;
        }
        return deps.events.readStream(stream, options);
      },
    });
    const a = await instance('A', { events });
    onTeardown = release;
    await b.member.revoke(everyPartition());
    void a.member.assign(everyPartition());
    await eventually(async () => (held > 0 ? true : undefined));
    // Revoked while the adoption reads the tasks: when the reads answer, A tracks none of them.
    await a.member.revoke(everyPartition());
    release();
    await new Promise((r) => setTimeout(r, 500));
    const pollsByA = () => ids.flatMap((id) => of(id).polls.filter((p) => p.engine === 'A'));
    expect(pollsByA()).toEqual([]);

    await b.member.assign(everyPartition());
    for (const id of ids) expect((await waitForImageTask(api, id, 30_000)).status, id).toBe('completed');
    expect(pollsByA()).toEqual([]);
    closed += ids.length;
    await expectChargedOnce(closed);
  }, 60_000);
});
