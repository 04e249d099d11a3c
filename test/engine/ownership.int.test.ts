/**
 * Two engines share one store, views and bus; one of them dies for real (SIGKILL's equivalent in
 * one process: test/support/process-death.ts) while some of its upstream submits are under way —
 * the upstream took them, their answers never came back. The other engine adopts its partitions,
 * leaves those tasks alone while the dead one's submit lease holds, submits them once the lease
 * has run out (its clock moved past it), and every task completes, charged once.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnership, type Ownership } from '../../src/engine/dispatch/ownership.js';
import { outboundPolicy } from '../../src/engine/outbound/outbound-guard.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { SUBMIT_LEASE_SECONDS } from '../../src/engine/dispatch/dispatcher.js';
import { createTaskEngine, type TaskEngine } from '../../src/engine/dispatch/task-engine.js';
import type { UpstreamAdapter } from '../../src/engine/channels/upstream.js';
import { wrappedUpstreams } from '../support/wrapped-upstreams.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';
import { processDeath } from '../support/process-death.js';

/** Which engine submitted and polled which task: the real adapters, observed. */
interface Record {
  submits: string[];
  polls: { engine: string; at: number }[];
}
const record = new Map<string, Record>();
const entry = (taskId: string) => record.get(taskId) ?? (record.set(taskId, { submits: [], polls: [] }), record.get(taskId)!);

/** A's upstream answers are held back from this promise on (they reach A only if it resolves). */
let holdA: Promise<void> | undefined;
/** Tasks the upstream accepted from A whose answer A is still waiting for. */
const heldByA = new Set<string>();

function observed(engine: string): Map<string, UpstreamAdapter> {
  return wrappedUpstreams((a) => ({
    submit: async (ctx) => {
      entry(ctx.task.taskId).submits.push(engine);
      const answer = await a.submit(ctx);
      if (engine === 'A' && holdA) {
        heldByA.add(ctx.task.taskId);
        await holdA;
      }
      return answer;
    },
    poll: async (ctx) => {
      entry(ctx.task.taskId).polls.push({ engine, at: Date.now() });
      return a.poll(ctx);
    },
  }));
}

let gw: TestGateway;
let api: Client;
let accountId: string;
const live: TaskEngine[] = [];
const ownerships = new Map<TaskEngine, Ownership>();
/** A's death: every port A writes or waits on goes through it. */
const deathOfA = processDeath();
let deadEngine: TaskEngine | undefined;
/** B's clock runs this far ahead once the test lets time pass (the lease running out). */
let skewOfB = 0;

/**
 * A real crash: from now on A reaches no store and no upstream and hears no answer (what it
 * was awaiting stays pending), and nothing of it is stopped. Its group membership ends as a
 * dead member's does when its session times out: the group hands its partitions to B.
 */
async function crash(e: TaskEngine): Promise<void> {
  deathOfA.die();
  deadEngine = e;
  live.splice(live.indexOf(e), 1);
  await ownerships.get(e)!.stop();
}

function engine(name: 'A' | 'B'): TaskEngine {
  const deps = gw.gateway.deps;
  const ownership = createOwnership(deps.bus, 'ownership-test');
  // A's ports go through its death; B's are the store's own.
  const port = <T extends object>(p: T): T => (name === 'A' ? deathOfA.wrap(p) : p);
  const e = createTaskEngine({
    ...deps,
    events: port(deps.events),
    views: port(deps.views),
    assets: port(deps.assets),
    accounts: port(deps.accounts),
    upstreams: new Map([...observed(name)].map(([family, adapter]) => [family, port(adapter)])),
    clock: name === 'A' ? deps.clock : () => new Date(deps.clock().getTime() + skewOfB),
    // Different owners of submit leases, as two processes are.
    instanceId: `ownership-test-${name}`,
    log: pino({ level: 'silent' }),
    assetRetentionSeconds: 3600,
    channelConcurrency: 8,
    pollIntervalMs: 30,
    ownership,
    partitioned: true,
    viewsReachHead: () => port({ reach: () => waitForProjectedHead(deps.events, deps.runner, 10_000) }).reach(),
    outbound: (base) => outboundPolicy(deps.config, deps.selfUrl(), [base]),
  });
  live.push(e);
  ownerships.set(e, ownership);
  return e;
}

beforeAll(async () => {
  // Slow tasks take 20 steps (2 s): some that A polls are still running when it dies.
  gw = await startGateway({ SIM_STEP_MS: '100', POLL_INTERVAL_MS: '30' });
  // The gateway's own engine steps aside: two engines share its store, views and bus.
  await gw.gateway.engine.stop();
  const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(async () => {
  for (const e of live) await e.stop();
  // The dead engine's pending calls fail now, so it can be stopped and leaves no timer behind.
  deathOfA.bury();
  // Each of its processes on its own: a stop may fail on what its dead ports failed.
  for (const p of [...(deadEngine?.processes ?? [])].reverse()) await p.stop().catch(() => undefined);
  await gw.close();
});

describe('work ownership across instances', () => {
  it('every task is dispatched and polled by exactly one engine, including across a crash of one', async () => {
    const a = engine('A');
    const b = engine('B');
    await a.start();
    await b.start();

    const ids: string[] = [];
    const submit = async (i: number) => {
      const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `owned ${i} [sim:slow]` });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.id);
    };
    for (let i = 0; i < 30; i++) await submit(i);
    // Both engines are at work before one of them dies.
    await eventually(async () => (new Set([...record.values()].flatMap((r) => r.polls.map((p) => p.engine))).size === 2 ? true : undefined));
    // Then A's upstream answers stop coming back, and more tasks arrive: A dies with submits under way.
    holdA = new Promise<void>(() => undefined);
    for (let i = 30; i < 40; i++) await submit(i);
    await eventually(async () => (heldByA.size > 0 ? true : undefined));
    const crashedAt = Date.now();
    await crash(a);

    // B adopts A's partitions, but A's submit lease holds: B leaves those tasks `submitted`.
    await new Promise((r) => setTimeout(r, 1500));
    // Every submit A had under way has reached the upstream by now; A heard none of the answers.
    const cutOff = [...heldByA];
    for (const id of cutOff) {
      expect(record.get(id)!.submits, `${id} submitted again while A's lease held`).toEqual(['A']);
      const stream = await gw.gateway.deps.events.readStream(`task-${id}`);
      expect(stream.map((e) => e.type)).not.toContain('UpstreamSubmitted');
      expect(stream.filter((e) => e.type === 'UpstreamSubmitClaimed').map((e) => (e.data as { owner: string }).owner)).toEqual(['ownership-test-A']);
    }
    // Time passes beyond the lease (B's clock): B claims and submits them.
    skewOfB = (SUBMIT_LEASE_SECONDS + 1) * 1000;

    for (const id of ids) {
      const done = await waitForImageTask(api, id, 30_000).catch(async (err: unknown) => {
        const stream = await gw.gateway.deps.events.readStream(`task-${id}`);
        const r = record.get(id);
        throw new Error(
          `${id} (partition ${gw.gateway.deps.bus.partitionOf(id)}) did not finish: ${stream.map((e) => e.type).join(',')}; submits ${String(r?.submits)}; polls ${JSON.stringify(r?.polls.map((p) => [p.engine, p.at - crashedAt]))}; ${String(err)}`,
        );
      });
      expect(done.status).toBe('completed');
    }
    for (const id of ids) {
      const r = record.get(id)!;
      const stream = await gw.gateway.deps.events.readStream(`task-${id}`);
      expect(
        stream.filter((e) => e.type === 'UpstreamSubmitted'),
        id,
      ).toHaveLength(1);
      // A second upstream submission exactly where A died in the middle of its own: the upstream
      // took A's, whose answer was lost with A, and B's once the lease ran out.
      if (cutOff.includes(id)) expect(r.submits, id).toEqual(['A', 'B']);
      else expect(r.submits, id).toHaveLength(1);
      const before = new Set(r.polls.filter((p) => p.at < crashedAt - 50).map((p) => p.engine));
      expect(before.size, `${id} polled by ${[...before].join(',')}`).toBeLessThanOrEqual(1);
      expect(r.polls.filter((p) => p.engine === 'A' && p.at > crashedAt + 200)).toEqual([]);
    }
    // B adopted tasks that A had been polling when it died.
    const adopted = ids.filter((id) => {
      const polls = record.get(id)!.polls;
      return polls.some((p) => p.engine === 'A' && p.at < crashedAt) && polls.some((p) => p.engine === 'B' && p.at > crashedAt);
    });
    expect(adopted.length).toBeGreaterThan(0);
    const submitters = new Set(ids.map((id) => record.get(id)!.submits[0]));
    expect(submitters).toEqual(new Set(['A', 'B']));
    await b.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    expect(await expectEachReservationClosedOnce(gw, accountId)).toBe(40);
    console.log(`[ownership] A died with ${cutOff.length} submits under way; B submitted them after the lease; 40 tasks completed, each charged once`);
  }, 60_000);
});
