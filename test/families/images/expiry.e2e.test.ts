import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../../support/images.js';

let gw: TestGateway;
let api: Client;

beforeAll(async () => {
  gw = await startGateway({ ...FAST_ENGINE, ASSET_RETENTION_SECONDS: '2' });
  const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(() => gw.close());

describe('asset retention', () => {
  it('a result URL is reachable before expiry; after it the URL is gone, data is empty and assetsExpireAt was honest', async () => {
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'short-lived', n: 2 });
    const done = await waitForImageTask(api, r.body.id);
    const url: string = done.data[0].url;
    const expireAt: number = done.metadata.assetsExpireAt;
    // Retention runs from the upstream's answer, taken before the files are stored: the store may
    // end in the next second (a loaded machine), so completed_at is that second or one later.
    expect(expireAt).toBeGreaterThanOrEqual(done.created_at + 2);
    expect(expireAt).toBeLessThanOrEqual(done.completed_at + 2);
    expect((await fetch(url)).status).toBe(200);

    const expired = await eventually(
      async () => {
        const p = await api.get(`/v1/images/async/generations/${r.body.id}`);
        return p.body.data.length === 0 ? p.body : undefined;
      },
      10_000,
      100,
    );
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(expireAt);
    expect(expired.status).toBe('completed');
    expect(expired.metadata.assetsExpireAt).toBe(expireAt);
    expect([404, 410]).toContain((await fetch(url)).status);
    const key = new URL(url).pathname.replace('/assets/', '');
    expect(await gw.gateway.deps.assets.stat(key)).toBeUndefined();
  });

  it('asset URLs answer byte ranges', async () => {
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'ranged' });
    const done = await waitForImageTask(api, r.body.id);
    const whole = Buffer.from(await (await fetch(done.data[0].url)).arrayBuffer());
    const part = await fetch(done.data[0].url, { headers: { range: 'bytes=8-23' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 8-23/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(8, 24));
    expect((await fetch(done.data[0].url, { headers: { range: `bytes=${whole.length + 10}-` } })).status).toBe(416);
  });

  it('a tampered or unsigned asset URL is refused', async () => {
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'signed' });
    const done = await waitForImageTask(api, r.body.id);
    const url = new URL(done.data[0].url);
    url.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
    expect((await fetch(url)).status).toBe(403);
    expect((await fetch(`${gw.url}${url.pathname}`)).status).toBe(403);
  });
});

describe('maximum task age', () => {
  it('a task that exceeds its max age fails with timeout and its reservation is released', async () => {
    const slow = await startGateway({ SIM_STEP_MS: '400', POLL_INTERVAL_MS: '50', TASK_MAX_AGE_SECONDS: '1' });
    try {
      const user = await newUser(await adminClient(slow), { credit: 1_000_000 });
      const client = new Client(slow.url, (await newToken(user.client)).key);
      const r = await client.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'takes forever [sim:slow]' });
      const done = await waitForImageTask(client, r.body.id, 10_000);
      expect(done.status).toBe('failed');
      expect(done.error.message).toMatch(/^timeout/);
      await slow.gateway.engine.settler.caughtUp(await slow.gateway.deps.events.headPosition());
      expect((await slow.gateway.deps.accounts.state(user.accountId)).reserved).toBe(0);
    } finally {
      await slow.close();
    }
  });
});
