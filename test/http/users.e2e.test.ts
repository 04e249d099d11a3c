import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminClient, Client, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let admin: Client;

beforeAll(async () => {
  gw = await startGateway();
  admin = await adminClient(gw);
});
afterAll(() => gw.close());

describe('users and sessions', () => {
  it('the first start creates the administrator from ADMIN_USERNAME / ADMIN_PASSWORD', async () => {
    const c = new Client(gw.url);
    const reply = await c.post('/api/user/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, data: { username: 'admin', role: 'admin' } });
    expect(typeof reply.body.data.id).toBe('string');
  });

  it('login sets an httpOnly SameSite session cookie', async () => {
    const res = await fetch(`${gw.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^gw_session=\w+/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it('a wrong password or an unknown user is refused with 401 and the same message', async () => {
    const c = new Client(gw.url);
    const wrong = await c.post('/api/user/login', { username: 'admin', password: 'not-the-password' });
    const unknown = await c.post('/api/user/login', { username: 'nobody-here', password: 'whatever-1' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.success).toBe(false);
  });

  it('GET /api/user/self shows the available quota and used quota', async () => {
    const { client } = await newUser(admin, { credit: 12_345 });
    const self = await client.get('/api/user/self');
    expect(self.status).toBe(200);
    expect(self.body.data).toMatchObject({ role: 'user', group: 'default', quota: 12_345, used_quota: 0 });
  });

  it('logout ends the session: the cookie no longer works', async () => {
    const { client } = await newUser(admin);
    const cookie = client.cookie;
    expect((await client.get('/api/user/self')).status).toBe(200);
    expect((await client.post('/api/user/logout')).status).toBe(200);
    const stale = new Client(gw.url);
    stale.cookie = cookie;
    const after = await stale.get('/api/user/self');
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ success: false });
  });

  it('a plain user is refused every admin route with 403', async () => {
    const { client, userId } = await newUser(admin);
    const refused = [
      await client.post('/api/user/', { username: 'sneaky', password: 'password-123' }),
      await client.get('/api/user/'),
      await client.get('/api/channel/'),
      await client.post('/api/channel/', { name: 'x', family: 'images', base_url: 'http://example.com', models: ['m'] }),
      await client.put('/api/pricing', { models: {} }),
      await client.get('/api/pricing'),
      await client.post('/api/admin/credits', { user_id: userId, amount: 100 }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.body.success).toBe(false);
    }
  });

  it('routes behind a session refuse a request without one (401)', async () => {
    const anon = new Client(gw.url);
    for (const r of [await anon.get('/api/user/self'), await anon.get('/api/token/'), await anon.get('/api/channel/')]) {
      expect(r.status).toBe(401);
    }
  });

  it('a username is taken once, case-insensitively', async () => {
    const first = await admin.post('/api/user/', { username: 'Duplicate_Name', password: 'password-123' });
    expect(first.status).toBe(200);
    const second = await admin.post('/api/user/', { username: 'duplicate_name', password: 'password-123' });
    expect(second.status).toBe(409);
    expect(second.body.message).toMatch(/username/);
  });

  it('bad user input is refused with a message naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ username: 'ab', password: 'password-123' }, 'username'],
      [{ username: 'valid_name', password: 'short' }, 'password'],
      [{ username: 'valid_name2', password: 'password-123', group: 'bad group!' }, 'group'],
      [{ password: 'password-123' }, 'username'],
    ];
    for (const [body, field] of cases) {
      const r = await admin.post('/api/user/', body);
      expect(r.status).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toContain(field);
    }
    const badJson = await admin.request('POST', '/api/user/', '{"username":');
    expect(badJson.status).toBe(400);
  });
});
