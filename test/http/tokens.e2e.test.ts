import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let admin: Client;

beforeAll(async () => {
  gw = await startGateway();
  admin = await adminClient(gw);
});
afterAll(() => gw.close());

describe('token management (spec 4.1)', () => {
  it('POST creates a token and answers its record with the full sk- key once', async () => {
    const { client } = await newUser(admin);
    const reply = await client.post('/api/token/', { name: 'ci', remain_quota: 5000, model_limits: ['anime-diffusion-4-5-full'] });
    expect(reply.status).toBe(200);
    expect(reply.body.success).toBe(true);
    const t = reply.body.data;
    expect(t.key).toMatch(/^sk-[0-9A-Za-z]{48}$/);
    expect(t).toMatchObject({
      name: 'ci',
      status: 1,
      expired_time: -1,
      remain_quota: 5000,
      unlimited_quota: false,
      used_quota: 0,
      model_limits: ['anime-diffusion-4-5-full'],
      group: 'default',
      allow_ips: [],
      channel_id: null,
    });
    const list = await client.get('/api/token/');
    expect(list.body.data.total).toBe(1);
    const listed = list.body.data.items[0];
    expect(listed.id).toBe(t.id);
    expect(listed.key).not.toBe(t.key);
    expect(listed.key).toBe(`sk-****${t.key.slice(-4)}`);
  });

  it('the key is stored only as a hash: no event or view holds it', async () => {
    const { client } = await newUser(admin);
    const { key } = await newToken(client);
    const events = await gw.gateway.deps.events.readAll({ streamPrefixes: ['token-'] });
    const views = await gw.gateway.deps.views.find('tokens', {});
    const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
    expect(events.length).toBeGreaterThan(0);
    expect(text(events)).not.toContain(key);
    expect(text(views)).not.toContain(key);
  });

  it('PUT changes only the given fields', async () => {
    const { client } = await newUser(admin);
    const { id } = await newToken(client, { name: 'before', remain_quota: 10 });
    const put = await client.put('/api/token/', { id, name: 'after', allow_ips: '10.0.0.0/8, 192.168.1.7', model_limits: 'a,b' });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id, name: 'after', remain_quota: 10, allow_ips: ['10.0.0.0/8', '192.168.1.7'], model_limits: ['a', 'b'] });
  });

  it('list is paged', async () => {
    const { client } = await newUser(admin);
    for (let i = 0; i < 5; i++) await newToken(client, { name: `t${i}` });
    const page = await client.get('/api/token/?p=1&size=2');
    expect(page.body.data).toMatchObject({ total: 5, page: 1, page_size: 2 });
    expect(page.body.data.items).toHaveLength(2);
  });

  it('DELETE removes the token, and the key stops working', async () => {
    const { client } = await newUser(admin);
    const { id, key } = await newToken(client);
    const bearer = new Client(gw.url, key);
    expect((await bearer.get('/v1/models')).status).toBe(200);
    expect((await client.delete(`/api/token/${id}`)).status).toBe(200);
    expect((await client.get('/api/token/')).body.data.total).toBe(0);
    expect((await bearer.get('/v1/models')).status).toBe(401);
  });

  it("another user's token is indistinguishable from a missing one", async () => {
    const a = await newUser(admin);
    const b = await newUser(admin);
    const { id } = await newToken(a.client);
    const put = await b.client.put('/api/token/', { id, name: 'stolen' });
    const del = await b.client.delete(`/api/token/${id}`);
    const missing = await b.client.put('/api/token/', { id: 'tok_doesnotexist', name: 'x' });
    expect(put.status).toBe(404);
    expect(del.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(put.body.message.replace(id, 'ID')).toBe(missing.body.message.replace('tok_doesnotexist', 'ID'));
  });

  it('bad token input is refused naming the field, and nothing is appended', async () => {
    const { client } = await newUser(admin);
    const head = await gw.gateway.deps.events.headPosition();
    const cases: [unknown, string][] = [
      [{ status: 3 }, 'status'],
      [{ expired_time: -5 }, 'expired_time'],
      [{ expired_time: 1000 }, 'expired_time'],
      [{ remain_quota: -1 }, 'remain_quota'],
      [{ remain_quota: 1.5 }, 'remain_quota'],
      [{ unlimited_quota: 'yes' }, 'unlimited_quota'],
      [{ allow_ips: ['not-an-ip'] }, 'allow_ips'],
      [{ allow_ips: ['10.0.0.0/99'] }, 'allow_ips'],
      [{ channel_id: 'ch_nope' }, 'channel_id'],
      [{ group: 'vip' }, 'group'],
      [{ surprise: 1 }, 'surprise'],
      [{ name: 'x'.repeat(65) }, 'name'],
    ];
    for (const [body, field] of cases) {
      const r = await client.post('/api/token/', body);
      expect(r.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body.success).toBe(false);
      expect(r.body.message, JSON.stringify(body)).toContain(field);
    }
    const put = await client.put('/api/token/', { name: 'no id' });
    expect(put.status).toBe(400);
    expect(put.body.message).toContain('id');
    expect(await gw.gateway.deps.events.headPosition()).toBe(head);
  });

  it('an admin may bind a token to a group and to a channel', async () => {
    const reply = await admin.post('/api/token/', { name: 'bound', group: 'default', channel_id: 'sim-motion' });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ channel_id: 'sim-motion', group: 'default' });
  });
});
