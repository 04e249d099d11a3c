/**
 * Settlement scoped to owned partitions, on two task engines of the distributed kind
 * (`partitioned`) sharing one gateway's store, views and simulator, their group membership
 * scripted (scripted-group-bus.ts). Each engine's account service is observed: every settle or
 * release it attempts is recorded, so "settled by exactly one engine" is seen directly rather
 * than inferred from the idempotent account stream (which absorbs a second attempt).
 */
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitForProjectedHead } from '../../projections/head.js';
import type { AccountService } from '../../src/engine/accounts/account-service.js';
import { createOwnership } from '../../src/engine/dispatch/ownership.js';
import { outboundPolicy } from '../../src/engine/outbound/outbound-guard.js';
import { createTaskEngine, type TaskEngine } from '../../src/engine/dispatch/task-engine.js';
import { executeTask } from '../../src/engine/commands/task-commands.js';
import { upstreamAdapters } from '../../src/families/index.js';
import type { EventStore, Subscription } from '../../src/ports/event-store.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';
import { scriptedGroupBus, type ScriptedMember } from '../support/scripted-group-bus.js';

/** Settle and release attempts per task id: the engines that made them. */
const attempts = new Map<string, string[]>();
const attemptsOf = (taskId: string) => attempts.get(taskId) ?? [];

function observedAccounts(engine: string, accounts: AccountService): AccountService {
  return {
    ...accounts,
    execute: (accountId, command, metadata, options) => {
      if (command.type === 'SettleQuota' || command.type === 'ReleaseQuota')
        attempts.set(metadata.correlationId!, [...attemptsOf(metadata.correlationId!), engine]);
      return accounts.execute(accountId, command, metadata, options);
    },
  };
}

/**
 * The engine's event store, whose subscriptions can hold back every batch that carries a final
 * event until the test lets it pass: the engine sees the end of a task late.
 */
function heldFinalEvents(store: EventStore): { store: EventStore; hold(): void; release(): void; held(): number } {
  let gate: Promise<void> | undefined;
  let open = () => undefined as void;
  let held = 0;
  return {
    store: {
      ...store,
      subscribe(options) {
        const inner = store.subscribe(options);
        const iterator = inner[Symbol.asyncIterator]();
        const subscription: Subscription = {
          close: () => inner.close(),
          [Symbol.asyncIterator]: () => ({
            async next() {
              const next = await iterator.next();
              if (!next.done && gate && next.value.some((e) => e.type === 'TaskSucceeded' || e.type === 'TaskFailed')) {
                held++;
                await gate;
                held--;
              }
              return next;
            },
            return: async () => {
              await inner.close();
              return { done: true, value: undefined };
            },
          }),
        };
        return subscription;
      },
    },
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      gate = undefined;
      open();
    },
    held: () => held,
  };
}

let gw: TestGateway;
let api: Client;
let accountId: string;
let running: TaskEngine[] = [];
/** Lets held batches through after a failed test, so its engines can stop. */
let onTeardown = () => undefined as void;

interface Instance {
  engine: TaskEngine;
  member: ScriptedMember;
}

/** A started engine of the distributed kind, owning nothing until the test assigns it partitions. */
async function instance(name: string, options: { events?: EventStore; clock?: () => Date } = {}): Promise<Instance> {
  const deps = gw.gateway.deps;
  const group = scriptedGroupBus(deps.bus);
  const engine = createTaskEngine({
    ...deps,
    ...options,
    accounts: observedAccounts(name, deps.accounts),
    upstreams: new Map(upstreamAdapters.map((a) => [a.family, a])),
    log: pino({ level: 'silent' }),
    assetRetentionSeconds: 3600,
    channelConcurrency: 16,
    pollIntervalMs: 30,
    ownership: createOwnership(group.bus, 'owned-settlement-test'),
    partitioned: true,
    viewsReachHead: () => waitForProjectedHead(deps.events, deps.runner, 10_000),
    outbound: (base) => outboundPolicy(deps.config, deps.selfUrl(), [base]),
  });
  await engine.start();
  running.push(engine);
  return { engine, member: group.members[0]! };
}

const partitionOf = (taskId: string) => gw.gateway.deps.bus.partitionOf(taskId);
const partitions = () => Array.from({ length: gw.gateway.deps.bus.partitions }, (_, p) => p);
const even = () => partitions().filter((p) => p % 2 === 0);
const odd = () => partitions().filter((p) => p % 2 === 1);

async function submit(label: string): Promise<string> {
  const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: label });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

async function streamTypes(taskId: string): Promise<string[]> {
  return (await gw.gateway.deps.events.readStream(`task-${taskId}`)).map((e) => e.type);
}

async function settled(engine: TaskEngine): Promise<void> {
  await engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
}

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '30' });
  // The gateway's own engine steps aside: the test's engines share its store, views and simulator.
  await gw.gateway.engine.stop();
  const user = await newUser(await adminClient(gw), { credit: 100_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterEach(async () => {
  onTeardown();
  await Promise.all(running.map((e) => e.stop()));
  running = [];
});
afterAll(() => gw.close());

describe('settlement scoped to owned partitions', () => {
  it('each final task is settled by exactly one engine, the owner of its partition, and only the owner expires its assets', async () => {
    /** A's clock, moved past the assets' retention below. */
    let aheadMs = 0;
    const a = await instance('A', { clock: () => new Date(Date.now() + aheadMs) });
    const b = await instance('B');
    await a.member.assign(even());
    await b.member.assign(odd());

    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await submit(`split ${i}`));
    for (const id of ids) expect((await waitForImageTask(api, id, 20_000)).status, id).toBe('completed');
    await settled(a.engine);
    await settled(b.engine);
    // Both engines had tasks of their own.
    expect(new Set(ids.map((id) => partitionOf(id) % 2)).size).toBe(2);
    for (const id of ids) expect(attemptsOf(id), `${id} (partition ${partitionOf(id)})`).toEqual([partitionOf(id) % 2 === 0 ? 'A' : 'B']);
    await expectEachReservationClosedOnce(gw, accountId);

    // For A every task's assets are past their retention; A expires those of its partitions only.
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    aheadMs = 4 * 3600_000;
    await a.engine.expirer.runOnce();
    for (const id of ids) expect((await streamTypes(id)).includes('AssetsExpired'), `${id} (partition ${partitionOf(id)})`).toBe(partitionOf(id) % 2 === 0);
  }, 40_000);

  it('a task whose partition moves between its final event and its settlement is settled once, by the new owner', async () => {
    const held = heldFinalEvents(gw.gateway.deps.events);
    onTeardown = () => held.release();
    const a = await instance('A', { events: held.store });
    const b = await instance('B');
    await a.member.assign(partitions());

    // A sees the tasks' ends only after their partitions have moved to B.
    held.hold();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(`moved before settlement ${i}`));
    for (const id of ids) expect((await waitForImageTask(api, id, 20_000)).status, id).toBe('completed');
    for (const id of ids) expect(await streamTypes(id), id).toContain('TaskSucceeded');
    await eventually(async () => (held.held() > 0 ? true : undefined));
    for (const id of ids) expect(attemptsOf(id), id).toEqual([]);

    await a.member.revoke(partitions());
    await b.member.assign(partitions());
    held.release();
    await eventually(async () => (ids.every((id) => attemptsOf(id).length > 0) ? true : undefined));
    await settled(b.engine);
    // A's held batches have come through by now; A handles none of them.
    await eventually(async () => (held.held() === 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    for (const id of ids) expect(attemptsOf(id), id).toEqual(['B']);
    await expectEachReservationClosedOnce(gw, accountId);
  }, 40_000);

  it('a restarted engine resumes from its own partitions’ positions, not from where the other engine stands', async () => {
    const a = await instance('A');
    const b = await instance('B');
    await a.member.assign(even());
    await b.member.assign(odd());
    // Both engines settle something first: each has stored positions of its own.
    const warm: string[] = [];
    while (new Set(warm.map((id) => partitionOf(id) % 2)).size < 2) warm.push(await submit('before the restart'));
    for (const id of warm) expect((await waitForImageTask(api, id, 20_000)).status, id).toBe('completed');
    await settled(a.engine);

    // A stops. Tasks of its partitions end while it is away (failed here as a sweep would fail
    // them): nobody settles them yet. B meanwhile settles tasks of its own that end later.
    await a.engine.stop();
    running = running.filter((e) => e !== a.engine);
    const away: string[] = [];
    const later: string[] = [];
    while (away.length < 3) {
      const id = await submit('while A is away');
      (partitionOf(id) % 2 === 0 ? away : later).push(id);
    }
    for (const id of away)
      await executeTask(
        gw.gateway.deps.events,
        id,
        { type: 'FailTask', data: { code: 'timeout', reason: 'ended while its owner was away', completedAt: Math.floor(Date.now() / 1000) } },
        { at: new Date().toISOString(), accountId, correlationId: id },
      );
    /** Tasks of A's partitions submitted after those: A takes them up when it is back. */
    const waiting: string[] = [];
    while (later.length < 2) {
      const id = await submit('after A stopped');
      (partitionOf(id) % 2 === 1 ? later : waiting).push(id);
    }
    for (const id of later) expect((await waitForImageTask(api, id, 20_000)).status, id).toBe('completed');
    await settled(b.engine);
    for (const id of away) expect(attemptsOf(id), id).toEqual([]);

    // A again, on the same partitions: it releases what ended while it was away.
    const again = await instance('A again');
    await again.member.assign(even());
    await eventually(async () => (away.every((id) => attemptsOf(id).length > 0) ? true : undefined), 5000);
    await settled(again.engine);
    for (const id of away) expect(attemptsOf(id), id).toEqual(['A again']);
    for (const id of waiting) expect((await waitForImageTask(api, id, 20_000)).status, id).toBe('completed');
    await settled(again.engine);
    await expectEachReservationClosedOnce(gw, accountId);
  }, 40_000);
});
