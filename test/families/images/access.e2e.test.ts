import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway, expectNothingAppendedSince } from '../../support/gateway.js';
import { expectBooksBalance } from '../../support/billing.js';
import { FAST_ENGINE, waitForImageTask } from '../../support/images.js';
import { submitError } from '../../support/errors.js';

let gw: TestGateway;
let admin: Client;
let alice: { api: Client; accountId: string; session: Client };
let bob: { api: Client; accountId: string };

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
  const a = await newUser(admin, { credit: 10_000_000 });
  alice = { api: new Client(gw.url, (await newToken(a.client)).key), accountId: a.accountId, session: a.client };
  const b = await newUser(admin, { credit: 10_000_000 });
  bob = { api: new Client(gw.url, (await newToken(b.client)).key), accountId: b.accountId };
});
afterAll(() => gw.close());

describe('refusals append nothing and charge nothing', () => {
  const refused: [string, unknown, string][] = [
    ['no body', undefined, 'body'],
    ['array body', [], 'body'],
    ['no model', { prompt: 'x' }, 'model'],
    ['unknown model', { model: 'gpt-image-9', prompt: 'x' }, 'model'],
    ['empty prompt', { model: 'anime-diffusion-4-5-full', prompt: '  ' }, 'prompt'],
    ['anime n 5', { model: 'anime-diffusion-4-5-full', prompt: 'x', n: 5 }, 'n'],
    ['anime n as string', { model: 'anime-diffusion-4-5-full', prompt: 'x', n: '2' }, 'n'],
    ['anime images array', { model: 'anime-diffusion-4-5-full', prompt: 'x', images: ['https://a.example/1.png'] }, 'images'],
    ['anime image not a URL', { model: 'anime-diffusion-4-5-full', prompt: 'x', image: 'ftp://a.example/1.png' }, 'image'],
    ['pro-image n 129', { model: 'pro-image', prompt: 'x', n: 129 }, 'n'],
    ['pro-image quality', { model: 'pro-image', prompt: 'x', quality: 'ultra' }, 'quality'],
    ['pro-image background', { model: 'pro-image', prompt: 'x', background: 'pink' }, 'background'],
    ['pro-image image and images', { model: 'pro-image', prompt: 'x', image: 'https://a.example/1.png', images: ['https://a.example/2.png'] }, 'image'],
    ['vis basic ratio auto', { model: 'vis-imagine-1.0', prompt: 'x', size: 'auto' }, 'size'],
    ['vis edit six images', { model: 'vis-imagine-image', prompt: 'x', images: [1, 2, 3, 4, 5, 6].map((i) => `https://a.example/${i}.png`) }, 'images'],
    ['vis edit data URI', { model: 'vis-imagine-image', prompt: 'x', image: 'data:image/png;base64,iVBORw0KGgo=' }, 'image'],
    ['vis edit model without image', { model: 'vis-imagine-1.0-edit', prompt: 'x' }, 'image'],
    ['vis edit n 2', { model: 'vis-imagine-2.0-edit', prompt: 'x', image: 'https://a.example/1.png', n: 2 }, 'n'],
    ['picgen quality', { model: 'picgen-4-0-250828', prompt: 'x', quality: 'high' }, 'quality'],
    ['picgen n', { model: 'picgen-4-0-250828', prompt: 'x', n: 1 }, 'n'],
    ['picgen metadata model', { model: 'picgen-4-0-250828', prompt: 'x', metadata: { model: 'other' } }, 'metadata.model'],
  ];

  it.each(refused)('%s → 400 invalid_request naming %s', async (_name, body, field) => {
    const head = await gw.gateway.deps.events.headPosition();
    const r = body === undefined ? await alice.api.request('POST', '/v1/images/async/generations') : await alice.api.post('/v1/images/async/generations', body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    await expectNothingAppendedSince(gw, head, r);
  });

  it('malformed JSON is refused with 400 invalid_request', async () => {
    const r = await alice.api.request('POST', '/v1/images/async/generations', '{"model": "pro-image",');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
  });

  it('a model outside the token model_limits is refused with 403 invalid_request (reason model_not_allowed) and nothing appended', async () => {
    const limited = new Client(gw.url, (await newToken(alice.session, { model_limits: ['pro-image'] })).key);
    const head = await gw.gateway.deps.events.headPosition();
    const r = await limited.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'x' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(submitError('model_not_allowed', 'model: this API key may not use anime-diffusion-4-5-full', 'model'));
    await expectNothingAppendedSince(gw, head, r);
    expect((await limited.post('/v1/images/async/generations', { model: 'pro-image', prompt: 'x' })).status).toBe(200);
  });

  it('a submit the balance cannot cover is refused with 402 invalid_request (reason insufficient_quota) and nothing reserved', async () => {
    const poor = await newUser(admin, { credit: 5_000 });
    const api = new Client(gw.url, (await newToken(poor.client)).key);
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'x' });
    expect(r.status).toBe(402);
    expect(r.body).toEqual(submitError('insufficient_quota', expect.stringMatching(/^quota: \d+ needed, \d+ available$/), ''));
    const events = await gw.gateway.deps.events.readStream(`account-${poor.accountId}`);
    expect(events.map((e) => e.type)).toEqual(['AccountOpened', 'QuotaCredited']);
  });

  it('a token whose remain_quota is below the quote is refused with 403', async () => {
    const small = new Client(gw.url, (await newToken(alice.session, { unlimited_quota: false, remain_quota: 15_000 })).key);
    const r = await small.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'x', n: 2 });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(submitError('token_quota_exhausted', expect.stringMatching(/^Authorization: /)));
  });
});

describe('only the owner can read a task (BOLA)', () => {
  it("another account's task answers exactly like a missing one: HTTP 400 task_not_exist", async () => {
    const mine = await alice.api.post('/v1/images/async/generations', { model: 'pro-image', prompt: 'private' });
    const theirs = await bob.api.get(`/v1/images/async/generations/${mine.body.id}`);
    const missing = await bob.api.get('/v1/images/async/generations/task_doesnotexist000000000');
    expect(theirs.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(theirs.body.code).toBe('task_not_exist');
    expect(missing.body.code).toBe('task_not_exist');
    expect(Object.keys(theirs.body).sort()).toEqual(Object.keys(missing.body).sort());
    expect((await alice.api.get(`/v1/images/async/generations/${mine.body.id}`)).status).toBe(200);
  });

  it('a query without a key is refused with 401', async () => {
    expect((await new Client(gw.url).get('/v1/images/async/generations/task_x')).status).toBe(401);
  });
});

describe('idempotent submits (Idempotency-Key)', () => {
  const body = { model: 'anime-diffusion-4-5-full', prompt: 'idempotent', n: 2 };

  it('a replayed submit returns the same task and charges once', async () => {
    const key = { 'idempotency-key': `k-${Date.now()}` };
    const first = await alice.api.post('/v1/images/async/generations', body, key);
    const second = await alice.api.post('/v1/images/async/generations', { prompt: 'idempotent', n: 2, model: 'anime-diffusion-4-5-full' }, key);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.created_at).toBe(first.body.created_at);
    const events = await gw.gateway.deps.events.readStream(`account-${alice.accountId}`);
    expect(events.filter((e) => e.type === 'QuotaReserved' && (e.data as { taskId: string }).taskId === first.body.id)).toHaveLength(1);
  });

  it('the same key with a different body is refused with 409', async () => {
    const key = { 'idempotency-key': `k2-${Date.now()}` };
    expect((await alice.api.post('/v1/images/async/generations', body, key)).status).toBe(200);
    const other = await alice.api.post('/v1/images/async/generations', { ...body, n: 1 }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'invalid_request', reason: 'idempotency_key_reused' });
  });

  it('keys are per token: another token may use the same key for its own task', async () => {
    const key = { 'idempotency-key': `shared-${Date.now()}` };
    const a = await alice.api.post('/v1/images/async/generations', body, key);
    const b = await bob.api.post('/v1/images/async/generations', body, key);
    expect(b.status).toBe(200);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('20 concurrent submits with one key create one task', async () => {
    const key = { 'idempotency-key': `burst-${Date.now()}` };
    const before = (await gw.gateway.deps.events.readStream(`account-${alice.accountId}`)).length;
    const replies = await Promise.all(Array.from({ length: 20 }, () => alice.api.post('/v1/images/async/generations', body, key)));
    for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const after = await gw.gateway.deps.events.readStream(`account-${alice.accountId}`);
    expect(after.slice(before).filter((e) => e.type === 'QuotaReserved')).toHaveLength(1);
  });

  it('a key longer than 255 characters is refused', async () => {
    const r = await alice.api.post('/v1/images/async/generations', body, { 'idempotency-key': 'x'.repeat(256) });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Idempotency-Key:/);
  });

  it('a key whose first submit was refused for quota may be used again after a top-up', async () => {
    const poor = await newUser(admin, { credit: 5_000 });
    const api = new Client(gw.url, (await newToken(poor.client)).key);
    const key = { 'idempotency-key': 'retry-after-topup' };
    expect((await api.post('/v1/images/async/generations', body, key)).status).toBe(402);
    await admin.post('/api/admin/credits', { user_id: poor.userId, amount: 100_000 });
    const retried = await api.post('/v1/images/async/generations', body, key);
    expect(retried.status).toBe(200);
    await waitForImageTask(api, retried.body.id);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await expectBooksBalance(gw, poor.accountId);
  });
});
