import type { FastifyRequest } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { submitTask } from '../../src/engine/tasks/submit.js';
import { authenticate } from '../../src/http/auth/bearer.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE } from '../support/images.js';
import { startReceiver } from '../support/receiver.js';
import { tempDir } from '../support/tmp.js';
import { withViewOverrides } from '../support/view-store-overrides.js';
import type { ViewWrite } from '../../src/ports/view-store.js';
import type { ImageTaskDoc } from '../../src/families/images/view.js';

const ENV = { ...FAST_ENGINE, CALLBACK_RETRY_SCHEDULE: '0.3,0.6,1.2', CALLBACK_TIMEOUT_MS: '400', CALLBACK_CHECK_MS: '50', ALLOW_LOOPBACK_OUTBOUND: '1' };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(gw: TestGateway) {
  const user = await newUser(await adminClient(gw), { credit: 1_000_000 });
  const { key } = await newToken(user.client);
  const request = { headers: { authorization: `Bearer ${key}` }, ip: '127.0.0.1' } as unknown as FastifyRequest;
  const caller = await authenticate(request, gw.gateway.deps.tokens, new Date());
  return { user, key, caller };
}

/**
 * An async image task with a callback address (the mechanism is the same for every family):
 * anime results are URLs, pro-image results Base64 that the body inlines.
 */
async function taskWithCallback(
  gw: TestGateway,
  caller: Awaited<ReturnType<typeof setup>>['caller'],
  url: string,
  prompt = 'with a callback',
  model: 'anime-diffusion-4-5-full' | 'pro-image' = 'anime-diffusion-4-5-full',
) {
  const task = await submitTask(gw.gateway.deps, {
    family: 'image',
    channelFamily: 'images',
    action: model === 'pro-image' ? 'pro-image/generate' : 'anime/generate',
    model,
    caller,
    request: { model, prompt, n: 1, size: '1024x1024' },
    units: 1,
    callbackUrl: url,
    metadata: { at: new Date().toISOString() },
  });
  return task.taskId;
}

describe('completion callbacks', () => {
  it('a final task produces exactly one accepted delivery, signed so standardwebhooks verifies it', async () => {
    const gw = await startGateway(ENV);
    cleanups.push(() => gw.close());
    const receiver = await startReceiver(() => 200);
    cleanups.push(() => receiver.close());
    const { user, key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url);

    await eventually(async () => (receiver.received.length >= 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(1);
    const delivery = receiver.received[0]!;
    const secret = (await user.client.get('/api/user/webhook-secret')).body.data.secret as string;
    const verified = new Webhook(secret).verify(delivery.body, delivery.headers) as { id: string; status: string; data: unknown[] };
    expect(verified).toMatchObject({ id: taskId, object: 'image.task', status: 'completed' });
    expect(verified.data).toHaveLength(1);
    expect(delivery.headers['webhook-id']).toBe(`msg_${taskId}`);
    // The body is what the task's query answers now that it is final (the same signed URLs).
    const query = await new Client(gw.url, key).get(`/v1/images/async/generations/${taskId}`);
    expect(query.body).toMatchObject({ status: 'completed', data: [{ url: expect.any(String) }] });
    expect(JSON.parse(delivery.body)).toEqual(query.body);

    const record = await new Client(gw.url, key).get(`/api/callbacks/${taskId}`);
    expect(record.body.data).toMatchObject({ state: 'delivered', url: receiver.url, attempts: [{ attempt: 1, status: 200, error: null }] });
    // Another account cannot see it.
    const other = await setup(gw);
    expect((await new Client(gw.url, other.key).get(`/api/callbacks/${taskId}`)).status).toBe(404);
  });

  it('a receiver answering 500 three times then 200 gets four attempts with growing gaps', async () => {
    const gw = await startGateway(ENV);
    cleanups.push(() => gw.close());
    const receiver = await startReceiver((n) => (n <= 3 ? 500 : 200));
    cleanups.push(() => receiver.close());
    const { key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url);
    const api = new Client(gw.url, key);
    const record = await eventually(
      async () => {
        const r = await api.get(`/api/callbacks/${taskId}`);
        return r.body.data?.state === 'delivered' ? r.body.data : undefined;
      },
      15_000,
      100,
    );
    expect(record.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 500, 200]);
    expect(receiver.received).toHaveLength(4);
    const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
    expect(gaps[0]!).toBeGreaterThanOrEqual(250);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    expect(gaps[2]!).toBeGreaterThan(gaps[1]!);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // One message: every attempt carries the same bytes (only the timestamp and signature change).
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ id: taskId, status: 'completed', data: [{ url: expect.any(String) }] });
  });

  it('a receiver that never answers ends in the dead-letter with every attempt recorded', async () => {
    const gw = await startGateway(ENV);
    cleanups.push(() => gw.close());
    const receiver = await startReceiver(() => 'hang');
    cleanups.push(() => receiver.close());
    const { key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url);
    const api = new Client(gw.url, key);
    const record = await eventually(
      async () => {
        const r = await api.get(`/api/callbacks/${taskId}`);
        return r.body.data?.state === 'dead' ? r.body.data : undefined;
      },
      20_000,
      100,
    );
    expect(record.attempts).toHaveLength(4);
    for (const a of record.attempts) expect(a).toMatchObject({ status: 0, error: expect.stringMatching(/no answer within 400 ms/) });
    expect(record.next_attempt_at).toBeNull();
  });

  it('a restart between attempts does not lose the retry', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let fail = true;
    const receiver = await startReceiver(() => (fail ? 503 : 200));
    cleanups.push(() => receiver.close());
    const slowRetry = { ...ENV, CALLBACK_RETRY_SCHEDULE: '2' };
    const first = await startGateway(slowRetry, { dataDir: dir.path, keepData: true });
    const { key, caller } = await setup(first);
    const taskId = await taskWithCallback(first, caller, receiver.url);
    await eventually(async () => (receiver.received.length >= 1 ? true : undefined));
    await first.close();
    fail = false;

    const second = await startGateway(slowRetry, { dataDir: dir.path, keepData: true });
    cleanups.push(() => second.close());
    const api = new Client(second.url, key);
    const record = await eventually(
      async () => {
        const r = await api.get(`/api/callbacks/${taskId}`);
        return r.body.data?.state === 'delivered' ? r.body.data : undefined;
      },
      15_000,
      100,
    );
    expect(record.attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
    expect(receiver.received).toHaveLength(2);
  });

  it('the secret can be rotated; later deliveries are signed with the new one', async () => {
    const gw = await startGateway(ENV);
    cleanups.push(() => gw.close());
    const { user } = await setup(gw);
    const before = (await user.client.get('/api/user/webhook-secret')).body.data.secret;
    const rotated = (await user.client.post('/api/user/webhook-secret/rotate')).body.data.secret;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(before);
    expect((await user.client.get('/api/user/webhook-secret')).body.data.secret).toBe(rotated);
  });
});

describe('callbacks through the families', () => {
  it('a lyrics task with hookUrl delivers its tune query record; a vidgen task with metadata.callback_url its envelope', async () => {
    const gw = await startGateway(ENV);
    cleanups.push(() => gw.close());
    const receiver = await startReceiver(() => 200);
    cleanups.push(() => receiver.close());
    const { user, key } = await setup(gw);
    const api = new Client(gw.url, key);
    const lyrics = await api.post('/tune/submit/LYRICS', { prompt: 'a song about callbacks', hookUrl: receiver.url });
    expect(lyrics.status).toBe(200);
    const video = await api.post('/v1/video/generations', {
      model: 'vendor-vidgen-2-5-260628',
      prompt: 'a signed video',
      metadata: { callback_url: receiver.url, resolution: '480p' },
    });
    expect(video.status).toBe(200);
    await eventually(async () => (receiver.received.length >= 2 ? true : undefined), 15_000);
    const secret = (await user.client.get('/api/user/webhook-secret')).body.data.secret as string;
    const bodies = receiver.received.map((r) => new Webhook(secret).verify(r.body, r.headers) as Record<string, unknown>);
    const tune = bodies.find((b) => (b as { data?: { task_id?: string } }).data?.task_id === lyrics.body.data);
    expect(tune).toMatchObject({ code: 'success', data: { status: 'SUCCESS', action: 'LYRICS' } });
    const vidgen = bodies.find((b) => (b as { data?: { task_id?: string } }).data?.task_id === video.body.id);
    expect(vidgen).toMatchObject({ code: 'success', data: { status: 'SUCCESS' } });
  });
});

/** Events of `type` in the task's stream. */
const eventsOf = async (gw: TestGateway, taskId: string, type: string) =>
  (await gw.gateway.deps.events.readStream(`task-${taskId}`)).filter((e) => e.type === type);

describe('callback bodies: the task as of the final event that scheduled the callback', () => {
  it('with the task view lagging behind the callbacks view, the one delivery still says completed, with its results', async () => {
    // A projector that has committed the callbacks view but not yet the task's final view
    // document: final image-task writes are held back, so the stored view stays "queued"/"in_progress".
    const held = (writes: readonly ViewWrite[]) =>
      writes.filter((w) => !(w.view === 'image-tasks' && ['completed', 'failed'].includes((w.doc as ImageTaskDoc | null)?.body.status ?? '')));
    const gw = await startGateway(ENV, {
      wrapViewStore: (store) =>
        withViewOverrides(store, {
          commit: (projection, writes, checkpoint) => store.commit(projection, held(writes), checkpoint),
          commitAll: (batch, checkpoint) =>
            store.commitAll(
              batch.map(({ projection, writes }) => ({ projection, writes: held(writes) })),
              checkpoint,
            ),
        }),
    });
    cleanups.push(() => gw.close());
    const receiver = await startReceiver(() => 200);
    cleanups.push(() => receiver.close());
    const { key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url, 'under projector lag');
    const api = new Client(gw.url, key);
    await eventually(async () => ((await api.get(`/api/callbacks/${taskId}`)).body.data?.state === 'delivered' ? true : undefined), 15_000, 100);

    // The lag held during the delivery: the stored view still shows the task unfinished.
    expect((await api.get(`/v1/images/async/generations/${taskId}`)).body.status).not.toBe('completed');
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ id: taskId, status: 'completed', progress: '100%', data: [{ url: expect.any(String) }] });
  });

  it('retries after the asset retention carry the byte-identical body the first attempt carried', async () => {
    const gw = await startGateway({ ...ENV, ASSET_RETENTION_SECONDS: '1', CALLBACK_RETRY_SCHEDULE: Array(30).fill('0.3').join(',') });
    cleanups.push(() => gw.close());
    let expired = false;
    const receiver = await startReceiver(() => (expired ? 200 : 500));
    cleanups.push(() => receiver.close());
    const { key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url, 'retried past the retention');
    const api = new Client(gw.url, key);
    await eventually(async () => (receiver.received.length >= 1 ? true : undefined), 15_000);
    // The retention passes while the receiver fails: the bytes are deleted and the view empties `data`.
    await eventually(async () => ((await api.get(`/v1/images/async/generations/${taskId}`)).body.data?.length === 0 ? true : undefined), 15_000);
    expect(await eventsOf(gw, taskId, 'AssetsExpired')).toHaveLength(1);
    const before = receiver.received.length;
    expired = true;
    const record = await eventually(
      async () => {
        const r = await api.get(`/api/callbacks/${taskId}`);
        return r.body.data?.state === 'delivered' ? r.body.data : undefined;
      },
      15_000,
      100,
    );

    expect(receiver.received.length).toBe(before + 1);
    expect(record.attempts.at(-1)).toMatchObject({ status: 200 });
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([`msg_${taskId}`]));
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ id: taskId, status: 'completed', data: [{ url: expect.any(String) }] });
  });

  it('a body whose inlined Base64 bytes were deleted after the retention is dead-lettered, never resent without them', async () => {
    const gw = await startGateway({ ...ENV, ASSET_RETENTION_SECONDS: '1', CALLBACK_RETRY_SCHEDULE: Array(30).fill('0.3').join(',') });
    cleanups.push(() => gw.close());
    const receiver = await startReceiver(() => 500);
    cleanups.push(() => receiver.close());
    const { key, caller } = await setup(gw);
    const taskId = await taskWithCallback(gw, caller, receiver.url, 'inline bytes past the retention', 'pro-image');
    const api = new Client(gw.url, key);
    const record = await eventually(
      async () => {
        const r = await api.get(`/api/callbacks/${taskId}`);
        return r.body.data?.state === 'dead' ? r.body.data : undefined;
      },
      20_000,
      100,
    );

    expect(await eventsOf(gw, taskId, 'AssetsExpired')).toHaveLength(1);
    expect(record.attempts.length).toBeLessThan(31);
    expect(record.attempts.at(-1)).toMatchObject({ status: 0, error: expect.stringMatching(/deleted after the asset retention/) });
    expect(receiver.received.length).toBe(record.attempts.length - 1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ id: taskId, status: 'completed', data: [{ b64_json: expect.any(String) }] });
  });
});
