/**
 * The assembled gateway submits a task upstream once even when the store fails to record the
 * submit (issue 22, hole 1), and the client reference it sends with every submit is one this
 * gateway honours on its own routes, so a gateway fronting another gets one job per task.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDataOf } from '../../src/domain/events.js';
import { asyncImagesUpstream } from '../../src/families/images/upstream.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { failingOnce } from '../support/faulty-event-store.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { RECORDING_BASE, recordingUpstream } from '../support/recording-upstream.js';

const recorder = recordingUpstream();
let faulty: ReturnType<typeof failingOnce>;
let gw: TestGateway;
let admin: Client;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { extraRoutes: [recorder.plugin], wrapEventStore: (s) => (faulty = failingOnce(s, 'UpstreamSubmitted')).store });
  admin = await adminClient(gw);
});
afterAll(() => gw.close());

async function channel(body: Record<string, unknown>): Promise<string> {
  const r = await admin.post('/api/channel/', { family: 'images', models: ['anime-diffusion-4-5-full'], ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id as string;
}

describe('one upstream submit per task', () => {
  it('the store fails to record the submit once: the engine records the answer it holds, the upstream gets one submit, the task completes and settles once', async () => {
    const channelId = await channel({ name: 'recorded', base_url: RECORDING_BASE, key: 'recorded' });
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client, { channel_id: channelId })).key);
    const prompt = 'the record of this submit fails once';
    faulty.arm();
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.id as string;

    expect((await waitForImageTask(api, id)).status).toBe('completed');
    expect(faulty.failed).toEqual([`task-${id}`]);
    const submits = recorder.calls.filter((c) => c.method === 'POST' && (c.body as { prompt?: string }).prompt === prompt);
    expect(submits).toHaveLength(1);
    expect(submits[0]!.idempotencyKey).toBe(`${id}:${channelId}`);
    const types = (await gw.gateway.deps.events.readStream(`task-${id}`)).map((e) => e.type);
    expect(types.filter((t) => t === 'UpstreamSubmitClaimed')).toHaveLength(1);
    expect(types.filter((t) => t === 'UpstreamSubmitted')).toHaveLength(1);
    expect(types.filter((t) => t === 'TaskSucceeded')).toHaveLength(1);
    await eventually(async () => ((await expectEachReservationClosedOnce(gw, user.accountId)) === 1 ? true : undefined));
    const settled = (await gw.gateway.deps.events.readStream(`account-${user.accountId}`)).filter((e) => e.type === 'QuotaSettled');
    expect(settled).toHaveLength(1);
  });

  it("a submit repeated with the same Idempotency-Key is answered with the same job by this gateway's own route (a gateway fronting another)", async () => {
    // The gateway is its own upstream here: the channel reaches its public route with a customer's key.
    const customer = await newUser(admin, { credit: 1_000_000 });
    // Bound to the simulator's channel: the downstream tasks never come back through the chained one.
    const key = (await newToken(customer.client, { channel_id: 'sim-images' })).key;
    const channelId = await channel({ name: 'chained', base_url: gw.url, key });
    await gw.gateway.deps.catalog.refresh();
    const doc = gw.gateway.deps.catalog.channel(channelId)!;
    // What a task recorded here would send (its TaskSubmitted), submitted to the chained channel by hand.
    const origin = await newUser(admin, { credit: 1_000_000 });
    const originApi = new Client(gw.url, (await newToken(origin.client, { channel_id: 'sim-images' })).key);
    const r = await originApi.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'submitted twice downstream', n: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [submitted] = await gw.gateway.deps.events.readStream(`task-${r.body.id as string}`, { maxCount: 1 });
    const task = submitted!.data as EventDataOf<'TaskSubmitted'>;
    const submit = (idempotencyKey: string) =>
      asyncImagesUpstream.submit({ channel: doc, baseUrl: gw.url, upstreamModel: 'anime-diffusion-4-5-full', task, idempotencyKey });

    const first = await submit(`${task.taskId}:${channelId}`);
    const again = await submit(`${task.taskId}:${channelId}`);
    expect(again.upstreamTaskId).toBe(first.upstreamTaskId);
    expect((await submit(`${task.taskId}:another-channel`)).upstreamTaskId).not.toBe(first.upstreamTaskId);
    // One job for the repeated key: the downstream account reserved twice, not three times.
    const reserved = (await gw.gateway.deps.events.readStream(`account-${customer.accountId}`)).filter((e) => e.type === 'QuotaReserved');
    expect(reserved).toHaveLength(2);
  });
});
