/**
 * Requests per minute per API key (RATE_LIMIT_PER_MINUTE and a token's `rate_limit_per_minute`),
 * on the assembled gateway: over the limit 429 with Retry-After in the family's error shape,
 * counted per key, nothing appended or charged; session routes and health checks not limited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountView } from '../../src/domain/account.js';
import { adminClient, Client, expectNothingAppendedSince, newToken, newUser, startGateway, type Reply, type TestGateway } from '../support/gateway.js';
import { plainError, submitError } from '../support/errors.js';

const MODEL = 'anime-diffusion-4-5-full';
/** A query of a task that does not exist (400 task_not_exist): a cheap request that counts like any other. */
const query = (api: Client) => api.get('/v1/images/async/generations/task_000000000000000000000000');
const limitedMessage = (perMinute: number) =>
  expect.stringMatching(new RegExp(`^Authorization: this API key may make ${perMinute} requests per minute; retry in \\d+ s$`));

function expectRetryAfter(reply: Reply): void {
  const seconds = Number(reply.headers.get('retry-after'));
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

async function spend(api: Client, requests: number): Promise<void> {
  for (let i = 0; i < requests; i++) expect((await query(api)).status).not.toBe(429);
}

describe('requests per minute per API key, default RATE_LIMIT_PER_MINUTE=3', () => {
  let gw: TestGateway;
  let admin: Client;
  let session: Client;
  let accountId: string;

  beforeAll(async () => {
    gw = await startGateway({ RATE_LIMIT_PER_MINUTE: '3' });
    admin = await adminClient(gw);
    ({ client: session, accountId } = await newUser(admin, { credit: 10_000_000 }));
  });
  afterAll(() => gw.close());

  it('the fourth request within the minute is 429 with Retry-After, in each family’s shape, and nothing is appended or charged', async () => {
    const api = new Client(gw.url, (await newToken(session)).key);
    for (let i = 0; i < 3; i++) {
      const r = await query(api);
      expect(r.status).toBe(400);
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }

    const head = await gw.gateway.deps.events.headPosition();
    const before = accountView(await gw.gateway.deps.accounts.state(accountId));
    const submit = await api.post('/v1/images/async/generations', { model: MODEL, prompt: 'over the limit', n: 1 });
    expect(submit.status).toBe(429);
    expectRetryAfter(submit);
    expect(submit.body).toEqual(submitError('rate_limited', limitedMessage(3), 'Authorization'));
    await expectNothingAppendedSince(gw, head, submit);
    expect(accountView(await gw.gateway.deps.accounts.state(accountId))).toEqual(before);

    const polled = await query(api);
    expect(polled.status).toBe(429);
    expectRetryAfter(polled);
    expect(polled.body).toEqual(plainError('rate_limited', limitedMessage(3), 'Authorization'));

    const art = await api.post('/art/submit/imagine', { prompt: 'a castle' });
    expect(art.status).toBe(429);
    expectRetryAfter(art);
    expect(art.body).toEqual({ code: 4, description: limitedMessage(3), result: null });
    await expectNothingAppendedSince(gw, head, art);
    expect(accountView(await gw.gateway.deps.accounts.state(accountId))).toEqual(before);
  });

  it('is counted per key, not per address: another key of the same user is not limited by a spent one', async () => {
    const spent = new Client(gw.url, (await newToken(session)).key);
    const fresh = new Client(gw.url, (await newToken(session)).key);
    await spend(spent, 3);
    expect((await query(spent)).status).toBe(429);
    expect((await query(fresh)).status).toBe(400);
  });

  it('does not limit session routes or health checks', async () => {
    const key = (await newToken(session)).key;
    const spent = new Client(gw.url, key);
    await spend(spent, 3);
    expect((await query(spent)).status).toBe(429);
    // The session (cookie) routes of the same user answer; so do the health checks, key or not.
    for (let i = 0; i < 5; i++) expect((await session.get('/api/token/')).status).toBe(200);
    expect((await spent.get('/healthz')).status).toBe(200);
    expect((await spent.get('/readyz')).status).toBe(200);
  });

  it('a token’s own limit overrides the default; null goes back to it', async () => {
    const created = await newToken(session, { rate_limit_per_minute: 2 });
    expect(created.record.rate_limit_per_minute).toBe(2);
    const api = new Client(gw.url, created.key);
    await spend(api, 2);
    const refused = await query(api);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(plainError('rate_limited', limitedMessage(2), 'Authorization'));

    // Back to the default of 3: the third request of the window was counted, the fourth is over it.
    const reset = await session.put('/api/token/', { id: created.id, rate_limit_per_minute: null });
    expect(reset.status).toBe(200);
    expect(reset.body.data.rate_limit_per_minute).toBeNull();
    const again = await query(api);
    expect(again.status).toBe(429);
    expect(again.body).toEqual(plainError('rate_limited', limitedMessage(3), 'Authorization'));

    const listed = (await session.get('/api/token/')).body.data.items.find((t: { id: string }) => t.id === created.id);
    expect(listed.rate_limit_per_minute).toBeNull();
    const plain = await newToken(session);
    expect(plain.record.rate_limit_per_minute).toBeNull();
  });

  it('a user may only tighten the default; an administrator may raise it or lift it for a key', async () => {
    for (const value of [4, 0]) {
      const refused = await session.post('/api/token/', { name: 'greedy', rate_limit_per_minute: value });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        success: false,
        code: 'forbidden',
        message: 'rate_limit_per_minute: only an administrator may set more than the default 3 requests per minute, or 0 (no limit)',
      });
    }
    const own = await newToken(session);
    expect((await session.put('/api/token/', { id: own.id, rate_limit_per_minute: 10 })).status).toBe(403);
    expect((await session.post('/api/token/', { rate_limit_per_minute: -1 })).status).toBe(400);

    const unlimited = new Client(gw.url, (await newToken(admin, { rate_limit_per_minute: 0 })).key);
    for (let i = 0; i < 8; i++) {
      const r = await query(unlimited);
      expect(r.status).toBe(400);
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const raised = new Client(gw.url, (await newToken(admin, { rate_limit_per_minute: 5 })).key);
    await spend(raised, 5);
    expect((await query(raised)).status).toBe(429);
  });
});

describe('with no default (RATE_LIMIT_PER_MINUTE unset), a token’s own limit still applies', () => {
  let gw: TestGateway;
  let session: Client;

  beforeAll(async () => {
    gw = await startGateway();
    ({ client: session } = await newUser(await adminClient(gw), { credit: 10_000_000 }));
  });
  afterAll(() => gw.close());

  it('a key without a limit is not counted; a key with one gets 429 in the tune family’s submit shape', async () => {
    const free = new Client(gw.url, (await newToken(session)).key);
    for (let i = 0; i < 10; i++) {
      const r = await query(free);
      expect(r.status).toBe(400);
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
    // No default to stay under: a user may set any limit.
    const limited = new Client(gw.url, (await newToken(session, { rate_limit_per_minute: 2 })).key);
    await spend(limited, 2);
    const head = await gw.gateway.deps.events.headPosition();
    const refused = await limited.post('/tune/submit/LYRICS', { prompt: 'a summer by the sea' });
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    expect(refused.body).toEqual(submitError('rate_limited', limitedMessage(2), 'Authorization'));
    await expectNothingAppendedSince(gw, head, refused);
  });
});
