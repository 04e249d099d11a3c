import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let admin: Client;
let user: Client;

beforeAll(async () => {
  gw = await startGateway();
  admin = await adminClient(gw);
  user = (await newUser(admin, { credit: 1_000_000 })).client;
});
afterAll(() => gw.close());

async function modelsWith(key?: string, headers: Record<string, string> = {}) {
  return new Client(gw.url, key).get('/v1/models', headers);
}

describe('bearer authentication (spec 5)', () => {
  it('a valid key lists models', async () => {
    const { key } = await newToken(user);
    const r = await modelsWith(key);
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('list');
  });

  it('a missing Authorization header is refused with 401', async () => {
    const r = await modelsWith();
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'unauthorized' });
    expect(r.body.message).toMatch(/Authorization/);
  });

  it('a malformed Authorization header is refused with 401', async () => {
    const r = await modelsWith(undefined, { authorization: 'Basic Zm9vOmJhcg==' });
    expect(r.status).toBe(401);
  });

  it('an unknown key is refused with 401', async () => {
    const r = await modelsWith('sk-thisisnotakeythisisnotakeythisisnotakeythisisnot');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('invalid_api_key');
  });

  it('a disabled key is refused with 403', async () => {
    const { key, id } = await newToken(user);
    await user.put('/api/token/', { id, status: 2 });
    const r = await modelsWith(key);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('token_disabled');
    await user.put('/api/token/', { id, status: 1 });
    expect((await modelsWith(key)).status).toBe(200);
  });

  it('an expired key is refused with 401', async () => {
    const soon = Math.floor(Date.now() / 1000) + 2;
    const { key } = await newToken(user, { expired_time: soon });
    expect((await modelsWith(key)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    const r = await modelsWith(key);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('token_expired');
  });

  it('a key with no quota left still reads (a cap limits spending, not reading)', async () => {
    const { key } = await newToken(user, { unlimited_quota: false, remain_quota: 0 });
    expect((await modelsWith(key)).status).toBe(200);
  });

  it('a key used from an address outside its allow-list is refused with 403', async () => {
    const { key: outside } = await newToken(user, { allow_ips: ['10.1.2.0/24'] });
    const r = await modelsWith(outside);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ip_not_allowed');
    const { key: inside } = await newToken(user, { allow_ips: ['127.0.0.0/8', '::1'] });
    expect((await modelsWith(inside)).status).toBe(200);
  });

  it('refusals append nothing', async () => {
    const head = await gw.gateway.deps.events.headPosition();
    await modelsWith();
    await modelsWith('sk-unknown');
    expect(await gw.gateway.deps.events.headPosition()).toBe(head);
  });
});

describe('GET /v1/models (spec 4.2)', () => {
  it('lists every model with a channel and a price in the OpenAI list shape', async () => {
    const { key } = await newToken(user);
    const r = await modelsWith(key);
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'pro-image',
        'std-image',
        'Vid-H3',
        'vendor-vidgen-2-5-260628',
        'tune_music',
        'clip-v2-master',
        'motion2.2-kf2v-flash',
        'anime-diffusion-4-5-full',
      ]),
    );
    for (const m of r.body.data) {
      expect(m).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
    }
  });

  it('is filtered by the token model_limits', async () => {
    const { key } = await newToken(user, { model_limits: ['pro-image', 'Vid-H3', 'no-such-model'] });
    const r = await modelsWith(key);
    expect(r.body.data.map((m: { id: string }) => m.id).sort()).toEqual(['Vid-H3', 'pro-image']);
  });

  it('hides models whose channels are disabled or that have no price', async () => {
    const { key } = await newToken(user);
    expect((await admin.put('/api/channel/', { id: 'sim-tune', status: 2 })).status).toBe(200);
    expect((await admin.put('/api/pricing', { models: { 'clip-v1': null } })).status).toBe(200);
    const ids = (await modelsWith(key)).body.data.map((m: { id: string }) => m.id);
    expect(ids).not.toContain('tune_music');
    expect(ids).not.toContain('clip-v1');
    expect(ids).toContain('clip-v1-6');
    await admin.put('/api/channel/', { id: 'sim-tune', status: 1 });
    expect((await modelsWith(key)).body.data.map((m: { id: string }) => m.id)).toContain('tune_music');
  });

  it('hides models whose channels do not serve the token group', async () => {
    const vip = await newUser(admin, { group: 'vip' });
    const created = await admin.post('/api/channel/', {
      name: 'vip only',
      family: 'tune',
      base_url: 'http://127.0.0.1:1/_sim',
      models: ['vip-song'],
      groups: ['vip'],
    });
    expect(created.status).toBe(200);
    await admin.put('/api/pricing', { models: { 'vip-song': { unit: 'request', price: 10 } } });
    const vipKey = (await newToken(vip.client)).key;
    const defaultKey = (await newToken(user)).key;
    expect((await modelsWith(vipKey)).body.data.map((m: { id: string }) => m.id)).toContain('vip-song');
    expect((await modelsWith(defaultKey)).body.data.map((m: { id: string }) => m.id)).not.toContain('vip-song');
  });
});
