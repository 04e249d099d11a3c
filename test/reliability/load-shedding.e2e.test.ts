/**
 * Load shedding on the assembled gateway: past MAX_REQUESTS_IN_FLIGHT, MAX_HEAP_USED_BYTES or
 * MAX_EVENT_LOOP_DELAY_MS new requests are refused at once, 429 with Retry-After in the family's
 * error shape, appending and charging nothing, while the health checks still answer 200.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountView } from '../../src/domain/account.js';
import { adminClient, Client, eventually, expectNothingAppendedSince, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { openaiErrorBody, plainError, submitError } from '../support/errors.js';

const MODEL = 'anime-diffusion-4-5-full';

async function expectHealthy(gw: TestGateway): Promise<void> {
  expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
}

describe('MAX_REQUESTS_IN_FLIGHT=2', () => {
  let gw: TestGateway;
  let api: Client;
  let accountId: string;

  beforeAll(async () => {
    gw = await startGateway({ MAX_REQUESTS_IN_FLIGHT: '2' });
    const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
    accountId = user.accountId;
    api = new Client(gw.url, (await newToken(user.client)).key);
  });
  afterAll(() => gw.close());

  /** An event stream: a request held open until aborted. */
  async function openStream(): Promise<AbortController> {
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/api/events/stream`, { headers: { authorization: `Bearer ${api.bearer!}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    // Its body is left unread: reading to the end or cancelling would close it.
    return controller;
  }

  it('with two requests held open, a burst is 429 with Retry-After in each family’s shape, nothing appended or charged; health answers', async () => {
    const streams = [await openStream(), await openStream()];
    const head = await gw.gateway.deps.events.headPosition();
    const before = accountView(await gw.gateway.deps.accounts.state(accountId));
    const message = 'server: 2 requests in flight, the most this instance takes; retry in 1 s';

    const burst = await Promise.all([
      api.post('/v1/images/async/generations', { model: MODEL, prompt: 'shed', n: 1 }),
      api.get('/v1/models'),
      api.get('/art/task/task_000000000000000000000000/fetch'),
      api.get('/v1/video/generations/task_000000000000000000000000'),
    ]);
    for (const r of burst) {
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('1');
      await expectNothingAppendedSince(gw, head, r);
    }
    const [submit, models, art, video] = burst;
    expect(submit.body).toEqual(submitError('overloaded', message));
    expect(models.body).toEqual(plainError('overloaded', message));
    expect(art.body).toEqual({ code: 4, description: message, result: null });
    expect(video.body).toEqual({ error: openaiErrorBody('overloaded', message, '') });
    expect(accountView(await gw.gateway.deps.accounts.state(accountId))).toEqual(before);
    await expectHealthy(gw);

    // One stream closed: requests are taken again.
    streams[0]!.abort();
    await eventually(async () => ((await api.get('/v1/models')).status === 200 ? true : undefined), 5_000);
    streams[1]!.abort();
  });
});

describe('MAX_HEAP_USED_BYTES=1 (under-pressure: always over it)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ MAX_HEAP_USED_BYTES: '1' });
  });
  afterAll(() => gw.close());

  it('sheds every request but the health checks once the heap is sampled', async () => {
    const anyone = new Client(gw.url);
    // The first sample is taken a second after the start.
    const refused = await eventually(async () => {
      const r = await anyone.get('/v1/models');
      return r.status === 429 ? r : undefined;
    }, 5_000);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual(plainError('overloaded', expect.stringMatching(/^server: overloaded \(heap \d+ bytes in use, at most 1\); retry in 1 s$/)));
    const art = await anyone.post('/art/submit/imagine', { prompt: 'a castle' });
    expect(art.status).toBe(429);
    expect(art.body).toMatchObject({ code: 4, result: null });
    const login = await anyone.post('/api/user/login', { username: 'admin', password: 'x' });
    expect(login.status).toBe(429);
    expect(login.body).toMatchObject({ success: false, code: 'overloaded' });
    await expectHealthy(gw);
  });
});

describe('MAX_EVENT_LOOP_DELAY_MS=100 (under-pressure)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ MAX_EVENT_LOOP_DELAY_MS: '100' });
  });
  afterAll(() => gw.close());

  /** Blocks this process's event loop (the gateway runs in it) in 300 ms slices for about `ms`. */
  async function stall(ms: number): Promise<void> {
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const until = Date.now() + ms;
    while (Date.now() < until) {
      Atomics.wait(cell, 0, 0, 300);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('a stalled event loop sheds requests until it recovers; health answers throughout', async () => {
    const anyone = new Client(gw.url);
    expect((await anyone.get('/v1/models')).status).toBe(401);
    await stall(2_500);
    const refused = await anyone.get('/v1/models');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual(
      plainError('overloaded', expect.stringMatching(/^server: overloaded \(event loop delay \d+ ms, at most 100\); retry in 1 s$/)),
    );
    await expectHealthy(gw);
    // Once the samples are calm again the request reaches its route (401: no key).
    await eventually(async () => ((await anyone.get('/v1/models')).status === 401 ? true : undefined), 10_000, 200);
  });
});
