/**
 * Two instances that both believe they own a task's partition (a rebalance in flight: kafkajs
 * lets the new owner start before the old one has finished) dispatch it at the same moment.
 * The submit lease on the task stream (UpstreamSubmitClaimed, appended with the expected
 * revision) lets exactly one of them submit upstream; the other leaves the task to it. The
 * upstream here counts submits and answers slowly, so both dispatches really overlap.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTask, SUBMIT_LEASE_SECONDS, type DispatcherDeps } from '../../src/engine/dispatch/dispatcher.js';
import { createSubmitLeaseMemory } from '../../src/engine/dispatch/submit-lease-memory.js';
import { wrappedUpstreams } from '../support/wrapped-upstreams.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' });
  // The two "instances" below dispatch by hand.
  await gw.gateway.engine.dispatcher.stop();
});
afterAll(() => gw.close());

/** The images adapter, wrapped: every submit counted per task and held back `delayMs`. */
function countingUpstreams(delayMs: number) {
  const submits = new Map<string, number>();
  const upstreams = wrappedUpstreams((a) => ({
    submit: async (ctx) => {
      submits.set(ctx.task.taskId, (submits.get(ctx.task.taskId) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, delayMs));
      return a.submit(ctx);
    },
  }));
  return { submits, upstreams };
}

describe('the submit lease', () => {
  it('two instances dispatching the same tasks at once: each task is submitted upstream once and recorded once', async () => {
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `overlap ${i}`, n: 1 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.id as string);
    }
    const { submits, upstreams } = countingUpstreams(150);
    const followed: string[] = [];
    const deferred: string[] = [];
    const instance = (instanceId: string): DispatcherDeps => ({
      ...gw.gateway.deps,
      upstreams,
      instanceId,
      leases: createSubmitLeaseMemory({ leaseMs: SUBMIT_LEASE_SECONDS * 1000 }),
      log: pino({ level: 'silent' }),
      onDispatched: (task) => void followed.push(`${instanceId}:${task.taskId}`),
      onClaimedElsewhere: (taskId) => void deferred.push(`${instanceId}:${taskId}`),
    });
    await Promise.all(ids.flatMap((id) => [dispatchTask(instance('old-owner'), id), dispatchTask(instance('new-owner'), id)]));
    // Each task: one instance submitted, the other was told to look again.
    for (const id of ids)
      expect(
        deferred.filter((d) => d.endsWith(`:${id}`)),
        id,
      ).toHaveLength(1);
    // Looking again (the holder may have left with the partition): it follows the recorded
    // submit instead of submitting, so a task is never orphaned between the two.
    for (const loser of deferred) {
      const [name, id] = loser.split(':') as [string, string];
      await dispatchTask(instance(name), id);
      expect(followed, loser).toContain(loser);
    }

    for (const id of ids) {
      expect(submits.get(id), id).toBe(1);
      const stream = (await gw.gateway.deps.events.readStream(`task-${id}`)).map((e) => e.type);
      expect(
        stream.filter((t) => t === 'UpstreamSubmitClaimed'),
        id,
      ).toHaveLength(1);
      expect(
        stream.filter((t) => t === 'UpstreamSubmitted'),
        id,
      ).toHaveLength(1);
    }
    // The lease holder follows its task; the task then completes and is charged once.
    for (const id of ids) expect(followed.filter((f) => f.endsWith(`:${id}`)).length, id).toBeGreaterThanOrEqual(1);
  });

  it('a lease whose holder died is taken over once the heir has itself watched it open for a whole lease, whatever its leaseUntil says', async () => {
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'orphaned lease', n: 1 });
    const id = r.body.id as string;
    const { submits, upstreams } = countingUpstreams(0);
    const { executeTask, readTask } = await import('../../src/engine/commands/task-commands.js');
    // A dead instance's claim whose leaseUntil (its clock) is long past on the heir's clock: a
    // skewed clock, or a holder that stamped it wrongly. The heir does not take its word for it.
    const now = Math.floor(Date.now() / 1000);
    await executeTask(
      gw.gateway.deps.events,
      id,
      { type: 'ClaimUpstreamSubmit', data: { channelId: 'sim-images', attempt: 1, owner: 'dead', leaseUntil: now - 3600 } },
      { at: new Date().toISOString() },
    );
    let clockMs = Date.now();
    const retries: number[] = [];
    const heir: DispatcherDeps = {
      ...gw.gateway.deps,
      upstreams,
      clock: () => new Date(clockMs),
      instanceId: 'heir',
      leases: createSubmitLeaseMemory({ leaseMs: SUBMIT_LEASE_SECONDS * 1000 }),
      log: pino({ level: 'silent' }),
      onDispatched: () => undefined,
      onClaimedElsewhere: (_taskId, retryInMs) => void retries.push(retryInMs),
    };
    await dispatchTask(heir, id);
    expect(submits.get(id)).toBeUndefined();
    expect(retries).toEqual([SUBMIT_LEASE_SECONDS * 1000]);
    clockMs += SUBMIT_LEASE_SECONDS * 1000 - 1000;
    await dispatchTask(heir, id);
    expect(submits.get(id)).toBeUndefined();
    expect(retries[1]).toBe(1000);
    clockMs += 1000;
    await dispatchTask(heir, id);
    expect(submits.get(id)).toBe(1);
    const { state } = await readTask(gw.gateway.deps.events, id);
    expect(state.status).toBe('dispatched');
    const claims = (await gw.gateway.deps.events.readStream(`task-${id}`)).filter((e) => e.type === 'UpstreamSubmitClaimed').map((e) => e.data);
    expect(claims).toEqual([expect.objectContaining({ owner: 'dead' }), expect.objectContaining({ owner: 'heir', epoch: 2 })]);
  });
});
