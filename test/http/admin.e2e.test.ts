import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let admin: Client;

beforeAll(async () => {
  gw = await startGateway();
  admin = await adminClient(gw);
});
afterAll(() => gw.close());

describe('admin: channels, prices, credits', () => {
  it('the embedded default seeds one simulator channel per family, and never shows the key', async () => {
    const r = await admin.get('/api/channel/');
    expect(r.status).toBe(200);
    const families = r.body.data.map((c: { family: string }) => c.family).sort();
    expect(families).toEqual(['art', 'clip', 'images', 'motion', 'tune', 'vid-h3', 'vidgen']);
    for (const c of r.body.data) {
      expect(c.key).toBeUndefined();
      expect(c.key_set).toBe(true);
      expect(c.base_url).toBe('/_sim');
    }
  });

  it('creates, updates and deletes a channel', async () => {
    const created = await admin.post('/api/channel/', {
      name: 'extra',
      family: 'images',
      base_url: 'https://upstream.example/api',
      key: 'secret-key',
      models: ['pro-image'],
      priority: 5,
    });
    expect(created.status).toBe(200);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({ name: 'extra', priority: 5, weight: 1, status: 1, groups: [], key_set: true });
    expect(JSON.stringify(created.body)).not.toContain('secret-key');
    const updated = await admin.put('/api/channel/', { id, weight: 3, status: 2 });
    expect(updated.body.data).toMatchObject({ id, weight: 3, status: 2, priority: 5 });
    expect((await admin.delete(`/api/channel/${id}`)).status).toBe(200);
    expect((await admin.get('/api/channel/')).body.data.map((c: { id: string }) => c.id)).not.toContain(id);
    expect((await admin.put('/api/channel/', { id, weight: 1 })).status).toBe(404);
  });

  it('sets and removes prices and group ratios', async () => {
    const put = await admin.put('/api/pricing', { models: { 'new-model': { unit: 'image', price: 123 } }, group_ratios: { vip: 800 } });
    expect(put.status).toBe(200);
    expect(put.body.data.models['new-model']).toEqual({ unit: 'image', price: 123 });
    expect(put.body.data.group_ratios).toMatchObject({ default: 1000, vip: 800 });
    expect(put.body.data.models['pro-image']).toBeDefined();
    const removed = await admin.put('/api/pricing', { models: { 'new-model': null } });
    expect(removed.body.data.models['new-model']).toBeUndefined();
  });

  it('credits a user: QuotaCredited on the account, visible as quota; a repeated credit_id applies once', async () => {
    const { client, userId, accountId } = await newUser(admin);
    const body = { user_id: userId, amount: 5000, note: 'welcome', credit_id: 'promo-1' };
    expect((await admin.post('/api/admin/credits', body)).body.data).toMatchObject({ account_id: accountId, balance: 5000 });
    expect((await admin.post('/api/admin/credits', body)).body.data).toMatchObject({ balance: 5000 });
    expect((await client.get('/api/user/self')).body.data.quota).toBe(5000);
    const events = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    expect(events.map((e) => e.type)).toEqual(['AccountOpened', 'QuotaCredited']);
  });

  it('bad admin input is refused naming the field, and nothing is appended', async () => {
    const head = await gw.gateway.deps.events.headPosition();
    const { userId } = { userId: 'usr_missing' };
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/channel/', { name: 'x', family: 'images', base_url: 'ftp://nope', models: ['m'] }, 'base_url'],
      ['POST', '/api/channel/', { name: 'x', family: 'images', base_url: 'http://ok.example', models: [] }, 'models'],
      ['POST', '/api/channel/', { name: 'x', family: 'Bad Family', base_url: 'http://ok.example', models: ['m'] }, 'family'],
      ['POST', '/api/channel/', { name: 'x', family: 'images', base_url: 'http://ok.example', models: ['m'], weight: -1 }, 'weight'],
      ['PUT', '/api/channel/', { weight: 1 }, 'id'],
      ['PUT', '/api/pricing', { models: { m: { unit: 'parsec', price: 1 } } }, 'unit'],
      ['PUT', '/api/pricing', { models: { m: { unit: 'image', price: 1.5 } } }, 'price'],
      ['PUT', '/api/pricing', { group_ratios: { vip: -3 } }, 'group_ratios'],
      ['POST', '/api/admin/credits', { user_id: userId, amount: 10 }, 'user_id'],
      ['POST', '/api/admin/credits', { user_id: 'x', amount: 0 }, 'amount'],
      ['POST', '/api/admin/credits', { user_id: 'x', amount: 2.5 }, 'amount'],
      ['POST', '/api/admin/credits', { user_id: 'x', amount: '100' }, 'amount'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await admin.request(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body.success).toBe(false);
      expect(r.body.message, JSON.stringify(body)).toContain(field);
    }
    expect(await gw.gateway.deps.events.headPosition()).toBe(head);
  });
});

describe('OpenAPI, health', () => {
  it('serves an OpenAPI document generated from the route schemas', async () => {
    const r = await new Client(gw.url).get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining(['/api/token/', '/api/user/login', '/v1/models', '/api/channel/', '/api/pricing']));
    expect(r.body.paths['/api/token/'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('remain_quota');
    const ui = await fetch(`${gw.url}/docs/`);
    expect(ui.status).toBe(200);
  });

  it('healthz and readyz answer', async () => {
    const c = new Client(gw.url);
    expect((await c.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await c.get('/readyz')).body).toMatchObject({ status: 'ready', checks: { events: 'ok', views: 'ok', bus: 'ok', assets: 'ok' } });
  });

  it('an unknown route answers 404 in the plain error shape', async () => {
    const r = await new Client(gw.url).get('/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'not_found' });
  });
});
