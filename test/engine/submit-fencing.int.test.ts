/**
 * At most one upstream submit per task, and only the open claim's outcome recorded (issue 22,
 * holes 1 and 2). Dispatches run by hand on one gateway's store, views and simulator, reached
 * through a recording pass-through that keeps every submit and its Idempotency-Key; the store
 * fails one append on request (a write that did not answer).
 */
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTask, SUBMIT_LEASE_SECONDS, type DispatcherDeps } from '../../src/engine/dispatch/dispatcher.js';
import { createSubmitLeaseMemory } from '../../src/engine/dispatch/submit-lease-memory.js';
import { readTask } from '../../src/engine/commands/task-commands.js';
import { UpstreamError } from '../../src/engine/channels/upstream.js';
import { wrappedUpstreams } from '../support/wrapped-upstreams.js';
import { upstreamAdapters } from '../../src/families/index.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { failingOnce } from '../support/faulty-event-store.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { RECORDING_BASE, recordingUpstream } from '../support/recording-upstream.js';

const recorder = recordingUpstream();
let faulty: ReturnType<typeof failingOnce>;
let gw: TestGateway;
let api: Client;
/** The same account, any channel serving the model (the simulator's and the recorded one). */
let apiAnyChannel: Client;
let accountId: string;
let channelId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { extraRoutes: [recorder.plugin], wrapEventStore: (s) => (faulty = failingOnce(s, 'UpstreamSubmitted')).store });
  // The instances below dispatch by hand; the gateway's poller follows what they record.
  await gw.gateway.engine.dispatcher.stop();
  const admin = await adminClient(gw);
  const channel = await admin.post('/api/channel/', {
    name: 'recorded images',
    family: 'images',
    base_url: RECORDING_BASE,
    key: 'recorded',
    models: ['anime-diffusion-4-5-full'],
  });
  expect(channel.status, JSON.stringify(channel.body)).toBe(200);
  channelId = channel.body.data.id as string;
  const user = await newUser(admin, { credit: 1_000_000 });
  accountId = user.accountId;
  // Bound to the recorded channel: every submit goes through the recorder.
  api = new Client(gw.url, (await newToken(user.client, { channel_id: channelId })).key);
  apiAnyChannel = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(() => gw.close());

async function newTask(prompt: string, client = api): Promise<string> {
  const r = await client.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

/** What the upstream received for the task of `prompt`: one entry per submit, its Idempotency-Key. */
const submitsOf = (prompt: string) =>
  recorder.calls.filter((c) => c.method === 'POST' && c.path === '/v1/images/async/generations' && (c.body as { prompt?: string }).prompt === prompt);

async function recorded(taskId: string) {
  return (await gw.gateway.deps.events.readStream(`task-${taskId}`)).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
}

function capturedLog(): { log: Logger; lines: { msg: string; taskId?: string }[] } {
  const lines: { msg: string; taskId?: string }[] = [];
  return { log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) }), lines };
}

function instance(instanceId: string, overrides: Partial<DispatcherDeps> = {}): DispatcherDeps {
  return {
    ...gw.gateway.deps,
    upstreams: new Map(upstreamAdapters.map((a) => [a.family, a])),
    instanceId,
    leases: createSubmitLeaseMemory({ leaseMs: SUBMIT_LEASE_SECONDS * 1000 }),
    log: pino({ level: 'silent' }),
    onDispatched: (task) => gw.gateway.engine.poller.track(task),
    onClaimedElsewhere: () => undefined,
    ...overrides,
  };
}

describe('one upstream submit per task when recording it fails', () => {
  it("the dispatch's retry records the answer it holds instead of submitting again: the upstream gets the task once", async () => {
    const prompt = 'record fails once';
    const id = await newTask(prompt);
    const one = instance('one');
    faulty.arm();
    await expect(dispatchTask(one, id)).rejects.toThrow(/injected failure appending UpstreamSubmitted/);
    // What dispatchInBackground does next: the same dispatch again, on the same engine.
    await dispatchTask(one, id);

    expect(submitsOf(prompt)).toHaveLength(1);
    const events = await recorded(id);
    expect(events.filter((e) => e.type === 'UpstreamSubmitClaimed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'UpstreamSubmitted')).toEqual([{ type: 'UpstreamSubmitted', data: expect.objectContaining({ epoch: 1 }) }]);
    expect((await waitForImageTask(api, id)).status).toBe('completed');
    await expectEachReservationClosedOnce(gw, accountId);
  });

  it('after a crash (the held answer lost) the task is claimed anew and submitted again with the same Idempotency-Key', async () => {
    const prompt = 'record fails, then the process dies';
    const id = await newTask(prompt);
    faulty.arm();
    await expect(dispatchTask(instance('embedded'), id)).rejects.toThrow(/injected failure/);
    // The same owner id (the embedded default's stable one), a new process: nothing held.
    const { log, lines } = capturedLog();
    const restarted = instance('embedded', { log });
    await dispatchTask(restarted, id);

    // An upstream that honours the key answers the second submit with the first job; this one
    // (the simulator) does not, which is the documented window.
    const submits = submitsOf(prompt);
    expect(submits.map((s) => s.idempotencyKey)).toEqual([`${id}:${channelId}`, `${id}:${channelId}`]);
    const events = await recorded(id);
    expect(events.filter((e) => e.type === 'UpstreamSubmitClaimed').map((e) => e.data.epoch)).toEqual([1, 2]);
    expect(events.filter((e) => e.type === 'UpstreamSubmitted').map((e) => e.data.epoch)).toEqual([2]);
    expect(lines.filter((l) => l.taskId === id && l.msg.startsWith('claimed again over an open claim'))).toHaveLength(1);
    expect(restarted.leases.counts).toEqual({ claimedOverOpen: 1, orphaned: 0 });
    expect((await waitForImageTask(api, id)).status).toBe('completed');
  });
});

/**
 * An instance's adapters whose submits wait for its gate (a paused process); `refuse`: each then
 * fails retryably instead of submitting. Counts its submits and keeps what the upstream answered.
 */
function gated(options: { refuse?: boolean } = {}) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let entered!: () => void;
  const inSubmit = new Promise<void>((r) => (entered = r));
  const answers: string[] = [];
  const calls = { submits: 0 };
  const upstreams = wrappedUpstreams((a) => ({
    submit: async (ctx) => {
      calls.submits++;
      entered();
      await gate;
      if (options.refuse) throw new UpstreamError('answered 503 after the pause', true, 503);
      const answer = await a.submit(ctx);
      answers.push(answer.upstreamTaskId);
      return answer;
    },
  }));
  return { upstreams, open, inSubmit, answers, calls };
}

describe('a paused holder is fenced', () => {
  it('its submit returns after another instance took the lease over: it cannot record over the new holder, whose submit is the one recorded', async () => {
    const prompt = 'paused past the lease';
    const id = await newTask(prompt);
    const a = gated();
    const b = gated();
    const aLog = capturedLog();
    const aDeps = instance('a', { upstreams: a.upstreams, log: aLog.log });
    const paused = dispatchTask(aDeps, id);
    await a.inSubmit;

    // b sees a's claim, watches it for a whole lease on its own clock, then takes it over.
    let bClockMs = Date.now();
    const bDeps = instance('b', { upstreams: b.upstreams, clock: () => new Date(bClockMs) });
    await dispatchTask(bDeps, id);
    expect((await recorded(id)).filter((e) => e.type === 'UpstreamSubmitClaimed')).toHaveLength(1);
    bClockMs += SUBMIT_LEASE_SECONDS * 1000;
    const taking = dispatchTask(bDeps, id);
    await b.inSubmit;
    expect((await recorded(id)).filter((e) => e.type === 'UpstreamSubmitClaimed').map((e) => e.data.owner)).toEqual(['a', 'b']);

    // a wakes first and records what its submit got: refused (fenced), logged as an orphan.
    a.open();
    await paused;
    expect((await recorded(id)).filter((e) => e.type === 'UpstreamSubmitted')).toEqual([]);
    expect(aLog.lines.filter((l) => l.taskId === id && l.msg.startsWith('upstream job orphaned'))).toHaveLength(1);
    expect(aDeps.leases.counts.orphaned).toBe(1);
    b.open();
    await taking;

    const events = await recorded(id);
    expect(events.filter((e) => e.type === 'UpstreamSubmitClaimed').map((e) => [e.data.owner, e.data.epoch])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    const submitted = events.filter((e) => e.type === 'UpstreamSubmitted');
    expect(submitted).toEqual([{ type: 'UpstreamSubmitted', data: expect.objectContaining({ epoch: 2, upstreamTaskId: b.answers[0] }) }]);
    // Both reached the upstream (it ignores the key: the documented window), with one key.
    expect(new Set(submitsOf(prompt).map((s) => s.idempotencyKey))).toEqual(new Set([`${id}:${channelId}`]));
    const { state } = await readTask(gw.gateway.deps.events, id);
    expect(state.status === 'none' ? undefined : state.upstreamTaskId).toBe(b.answers[0]);
    expect((await waitForImageTask(api, id)).status).toBe('completed');
    await expectEachReservationClosedOnce(gw, accountId);
  });

  it('its failure, answered after another instance took the lease over, is not recorded: it does not move on to the next channel, and the new holder completes the task', async () => {
    const prompt = 'paused, then refused, past the lease';
    const id = await newTask(prompt, apiAnyChannel);
    const a = gated({ refuse: true });
    const b = gated();
    const paused = dispatchTask(instance('a', { upstreams: a.upstreams }), id);
    await a.inSubmit;
    let bClockMs = Date.now();
    const bDeps = instance('b', { upstreams: b.upstreams, clock: () => new Date(bClockMs) });
    await dispatchTask(bDeps, id);
    bClockMs += SUBMIT_LEASE_SECONDS * 1000;
    const taking = dispatchTask(bDeps, id);
    await b.inSubmit;

    a.open();
    await paused;
    // Unfenced, a's failure ended b's claim and a went on to claim and submit on the next channel.
    expect(a.calls.submits).toBe(1);
    expect((await recorded(id)).filter((e) => e.type === 'UpstreamSubmitFailed')).toEqual([]);
    b.open();
    await taking;
    const events = await recorded(id);
    expect(events.filter((e) => e.type === 'UpstreamSubmitted')).toEqual([{ type: 'UpstreamSubmitted', data: expect.objectContaining({ epoch: 2 }) }]);
    expect((await waitForImageTask(api, id)).status).toBe('completed');
    await expectEachReservationClosedOnce(gw, accountId);
  });
});
