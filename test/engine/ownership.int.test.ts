import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnership, type Ownership } from '../../src/engine/ownership.js';
import { outboundPolicy } from '../../src/engine/outbound-guard.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { createTaskEngine, type TaskEngine } from '../../src/engine/task-engine.js';
import type { UpstreamAdapter } from '../../src/engine/upstream.js';
import { upstreamAdapters } from '../../src/families/index.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';

/** Which engine submitted and polled which task: the real adapters, observed. */
interface Record {
  submits: string[];
  polls: { engine: string; at: number }[];
}
const record = new Map<string, Record>();
const entry = (taskId: string) => record.get(taskId) ?? (record.set(taskId, { submits: [], polls: [] }), record.get(taskId)!);

function observed(engine: string): Map<string, UpstreamAdapter> {
  return new Map(
    upstreamAdapters.map((a) => [
      a.family,
      {
        ...a,
        delivery: a.delivery,
        submit: async (ctx) => {
          entry(ctx.task.taskId).submits.push(engine);
          return a.submit(ctx);
        },
        poll: async (ctx) => {
          entry(ctx.task.taskId).polls.push({ engine, at: Date.now() });
          return a.poll(ctx);
        },
      } satisfies UpstreamAdapter,
    ]),
  );
}

let gw: TestGateway;
let api: Client;
let accountId: string;
const engines: TaskEngine[] = [];
const ownerships = new Map<TaskEngine, Ownership>();

/** Leaves the group at once and stops without draining: what a dead process amounts to. */
async function crash(e: TaskEngine): Promise<void> {
  await Promise.all([ownerships.get(e)!.stop(), e.stop()]);
}

function engine(name: string): TaskEngine {
  const deps = gw.gateway.deps;
  const ownership = createOwnership(deps.bus, 'ownership-test');
  const e = createTaskEngine({
    ...deps,
    upstreams: observed(name),
    log: pino({ level: 'silent' }),
    assetRetentionSeconds: 3600,
    channelConcurrency: 8,
    pollIntervalMs: 30,
    ownership,
    partitioned: true,
    viewsReachHead: () => waitForProjectedHead(deps.events, deps.runner, 10_000),
    outbound: (base) => outboundPolicy(deps.config, deps.selfUrl(), [base]),
  });
  engines.push(e);
  ownerships.set(e, ownership);
  return e;
}

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '40', POLL_INTERVAL_MS: '30' });
  // The gateway's own engine steps aside: two engines share its store, views and bus.
  await gw.gateway.engine.stop();
  const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await gw.close();
});

describe('work ownership across instances', () => {
  it('every task is dispatched and polled by exactly one engine, including across a crash of one', async () => {
    const a = engine('A');
    const b = engine('B');
    await a.start();
    await b.start();

    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `owned ${i} [sim:slow]` });
      ids.push(r.body.id);
    }
    // Both engines are at work before one of them dies.
    await eventually(async () => (new Set([...record.values()].flatMap((r) => r.polls.map((p) => p.engine))).size === 2 ? true : undefined));
    // A crash: A leaves the group at once, whatever it was doing, and does nothing more.
    const crashedAt = Date.now();
    await crash(a);

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
      // A second upstream submission only where A died in the middle of its own.
      if (r.submits.length > 1) expect(r.submits).toEqual(['A', 'B']);
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
  }, 60_000);
});
