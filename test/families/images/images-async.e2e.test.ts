import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { FAST_ENGINE, pngSize, waitForImageTask } from '../../support/images.js';

let gw: TestGateway;
let admin: Client;
let api: Client;
let accountId: string;
const CREDIT = 50_000_000;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: CREDIT });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(() => gw.close());

const submit = (body: unknown, headers?: Record<string, string>) => api.post('/v1/images/async/generations', body, headers);

async function download(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('async images: every family and model to completion (spec 4.9, 4.10)', () => {
  const cases: [string, Record<string, unknown>, 'url' | 'b64', number][] = [
    ['pro-image', { model: 'pro-image', prompt: 'a lighthouse', n: 2, size: '1024x1536' }, 'b64', 2],
    ['pro-image edit', { model: 'pro-image', prompt: 'make it red', image: 'https://example.com/ref.png' }, 'b64', 1],
    ['anime full', { model: 'anime-diffusion-4-5-full', prompt: 'a fox', n: 3, size: '832x1216' }, 'url', 3],
    ['anime curated i2i', { model: 'anime-diffusion-4-5-curated', prompt: 'keep the face', image: 'https://example.com/a.png' }, 'url', 1],
    ['vis 1.0', { model: 'vis-imagine-1.0', prompt: 'a tree', size: '16:9' }, 'url', 1],
    ['vis 2.0', { model: 'vis-imagine-2.0', prompt: 'a tree', n: 2 }, 'url', 2],
    ['vis image', { model: 'vis-imagine-image', prompt: 'a tree', size: 'auto' }, 'url', 1],
    ['vis image quality', { model: 'vis-imagine-image-quality', prompt: 'a tree', size: '1792x1024' }, 'url', 1],
    ['vis image 2.0', { model: 'vis-imagine-image-2.0', prompt: 'a tree', quality: 'medium', n: 4 }, 'url', 4],
    [
      'vis 1.0 edit',
      { model: 'vis-imagine-1.0-edit', prompt: 'snow', images: ['https://example.com/1.png', 'https://example.com/1.png', 'https://example.com/2.png'] },
      'url',
      1,
    ],
    ['vis 2.0 edit', { model: 'vis-imagine-2.0-edit', prompt: 'snow', image: 'https://example.com/1.png' }, 'url', 1],
    ['vis image edit', { model: 'vis-imagine-image', prompt: 'snow', image: 'https://example.com/1.png' }, 'url', 1],
    ['picgen vendor name', { model: 'vendor-picgen-4-0-250828', prompt: 'a bridge', size: '2048x2048', metadata: { watermark: false } }, 'url', 1],
    ['picgen short name', { model: 'picgen-4-0-250828', prompt: 'a bridge', images: ['https://example.com/1.png'] }, 'url', 1],
  ];

  it.each(cases)('%s: submit → poll → completed with the right item kind and count', async (_name, body, kind, count) => {
    const r = await submit(body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    if (String(body.model).includes('picgen')) {
      expect(Object.keys(r.body).sort()).toEqual(['created_at', 'id', 'model', 'status', 'task_id']);
    } else {
      expect(r.body).toMatchObject({ object: 'image.task', status: 'queued', progress: '0%', data: [] });
    }
    expect(r.body.id).toMatch(/^task_/);
    expect(r.body.task_id).toBe(r.body.id);
    expect(r.body.model).toBe(body.model);
    expect(typeof r.body.created_at).toBe('number');

    const done = await waitForImageTask(api, r.body.id);
    expect(done).toMatchObject({ id: r.body.id, task_id: r.body.id, object: 'image.task', status: 'completed', progress: '100%' });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.data).toHaveLength(count);
    for (const item of done.data) {
      if (kind === 'b64') {
        expect(item.url).toBeUndefined();
        pngSize(Buffer.from(item.b64_json, 'base64'));
        expect(typeof item.revised_prompt).toBe('string');
      } else {
        expect(item.b64_json).toBeUndefined();
        const file = await download(item.url);
        expect(file.status).toBe(200);
        expect(file.type).toBe('image/png');
        pngSize(file.bytes);
      }
    }
    if (kind === 'url') expect(done.metadata.assetsExpireAt).toBeGreaterThan(done.completed_at);
  });

  it('re-hosts images at the requested size', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'sized', size: '832x1216' });
    const done = await waitForImageTask(api, r.body.id);
    expect(pngSize((await download(done.data[0].url)).bytes)).toEqual({ width: 832, height: 1216 });
  });

  it('a task polled right after submit is found', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'quick' });
    const polled = await api.get(`/v1/images/async/generations/${r.body.id}`);
    expect(polled.status).toBe(200);
    expect(['queued', 'in_progress', 'completed']).toContain(polled.body.status);
  });

  it('progress rises through in_progress for a slow task', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'slow one [sim:slow]' });
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const p = await api.get(`/v1/images/async/generations/${r.body.id}`);
      seen.add(`${p.body.status}:${p.body.progress}`);
      if (p.body.status === 'completed') break;
      await new Promise((res) => setTimeout(res, 15));
    }
    const progresses = [...seen].filter((s) => s.startsWith('in_progress')).map((s) => Number.parseInt(s.split(':')[1]!, 10));
    expect(progresses.length).toBeGreaterThan(1);
    expect(progresses).toEqual([...progresses].sort((a, b) => a - b));
    expect(seen.has('completed:100%')).toBe(true);
  });
});

describe('async images: failures and billing', () => {
  it('[sim:fail] ends failed with error, and the reservation is released', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'doomed [sim:fail]' });
    const done = await waitForImageTask(api, r.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: 'task_failed', message: expect.stringContaining('upstream_failed') });
    expect(done.data).toEqual([]);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const events = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    expect(events.find((e) => e.type === 'QuotaReleased' && (e.data as { taskId: string }).taskId === r.body.id)).toBeDefined();
    expect(events.find((e) => e.type === 'QuotaSettled' && (e.data as { taskId: string }).taskId === r.body.id)).toBeUndefined();
  });

  it('[sim:reject]: the upstream refuses the submit and the task fails without charge', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'refused [sim:reject]' });
    expect(r.status).toBe(200);
    const done = await waitForImageTask(api, r.body.id);
    expect(done.status).toBe('failed');
    expect(done.error.message).toMatch(/upstream_rejected/);
  });

  it('[sim:partial] settles only the images returned', async () => {
    const r = await submit({ model: 'anime-diffusion-4-5-full', prompt: 'fewer [sim:partial]', n: 4 });
    const done = await waitForImageTask(api, r.body.id);
    expect(done.data).toHaveLength(3);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const events = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    const reserved = events.find((e) => e.type === 'QuotaReserved' && (e.data as { taskId: string }).taskId === r.body.id)!.data as { amount: number };
    const settled = events.find((e) => e.type === 'QuotaSettled' && (e.data as { taskId: string }).taskId === r.body.id)!.data as {
      charged: number;
      basis: { units: number };
    };
    expect(reserved.amount).toBe(4 * 10_000);
    expect(settled.charged).toBe(3 * 10_000);
    expect(settled.basis.units).toBe(3);
  });

  it('[sim:5xx] on one channel fails over to a second channel', async () => {
    // A higher-priority channel whose upstream is down for every request.
    const down = await admin.post('/api/channel/', {
      name: 'down',
      family: 'images',
      base_url: '/_sim',
      key: 'broken [sim:5xx]',
      models: ['anime-diffusion-4-5-curated'],
      priority: 100,
    });
    expect(down.status).toBe(200);
    try {
      const r = await submit({ model: 'anime-diffusion-4-5-curated', prompt: 'fail over' });
      const done = await waitForImageTask(api, r.body.id);
      expect(done.status).toBe('completed');
      const stream = await gw.gateway.deps.events.readStream(`task-${r.body.id}`);
      const types = stream.map((e) => e.type);
      // Each try is claimed first (the submit lease), then recorded.
      expect(types.slice(0, 5)).toEqual(['TaskSubmitted', 'UpstreamSubmitClaimed', 'UpstreamSubmitFailed', 'UpstreamSubmitClaimed', 'UpstreamSubmitted']);
      expect(stream[2]!.data).toMatchObject({ channelId: down.body.data.id, retryable: true });
      expect(stream[4]!.data).toMatchObject({ channelId: 'sim-images' });
    } finally {
      await admin.delete(`/api/channel/${down.body.data.id}`);
    }
  });

  it('when every channel is down the task fails and nothing is charged', async () => {
    await admin.put('/api/channel/', { id: 'sim-images', key: 'broken [sim:5xx]' });
    try {
      const r = await submit({ model: 'vis-imagine-2.0', prompt: 'nowhere to go' });
      const done = await waitForImageTask(api, r.body.id);
      expect(done.status).toBe('failed');
      expect(done.error.message).toMatch(/no_channel_available/);
    } finally {
      await admin.put('/api/channel/', { id: 'sim-images', key: 'simulator' });
    }
  });

  it('after every task ends the books balance: balance = credits − settled, nothing reserved, ledger = replay', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const { charged } = await expectBooksBalance(gw, accountId);
    expect(charged).toBeGreaterThan(0);
    expect(await expectEachReservationClosedOnce(gw, accountId)).toBeGreaterThan(10);
  });
});
