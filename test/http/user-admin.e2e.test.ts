/**
 * Administering users on the assembled gateway: disable and enable (keys refused at once in each
 * family's shape, sessions and logins refused, tasks in flight finish), delete (soft), password
 * reset and change (other sessions end), group change (keys follow), debits with a reason
 * (never into what is reserved), revoking another user's key; each change an event that
 * administrators see on the event stream (never a password hash), kept across a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, expectNothingAppendedSince, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { waitForImageTask } from '../support/images.js';

const ENGINE = { SIM_STEP_MS: '60', POLL_INTERVAL_MS: '30' };
const dir = tempDir();
let gw: TestGateway;
let admin: Client;
beforeAll(async () => {
  gw = await startGateway(ENGINE, { dataDir: dir.path, keepData: true });
  admin = await adminClient(gw);
});
afterAll(async () => {
  await gw.close();
  dir.remove();
});

const IMAGE = { model: 'anime-diffusion-4-5-full', prompt: 'a fox', n: 1 };

/** A request of each family with the key, and the answers. */
async function eachFamily(key: string) {
  const api = new Client(gw.url, key);
  return {
    images: await api.post('/v1/images/async/generations', IMAGE),
    tune: await api.post('/tune/submit/LYRICS', { prompt: 'a song' }),
    videos: await api.post('/v1/videos', { model: 'vid-h3', prompt: 'a clip' }),
    chat: await api.post('/v1/chat/completions', { model: 'anime-diffusion-4-5-full', messages: [{ role: 'user', content: 'a fox' }] }),
    models: await api.get('/v1/models'),
  };
}

async function self(client: Client) {
  return (await client.get('/api/user/self')).body.data as { quota: number; reserved_quota: number; used_quota: number; balance: number };
}

describe('user administration', () => {
  it('a disabled user is refused everywhere at once, their task in flight finishes, and enabling lets them back', async () => {
    const user = await newUser(admin, { credit: 1_000_000 });
    const { key } = await newToken(user.client);
    const api = new Client(gw.url, key);
    const slow = await api.post('/v1/images/async/generations', { ...IMAGE, prompt: 'slow fox [sim:slow]' });
    expect(slow.status).toBe(200);

    const disabled = await admin.post(`/api/user/${user.userId}/disable`, { reason: 'abuse report #12' });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body.data).toMatchObject({ id: user.userId, status: 'disabled', disabled_reason: 'abuse report #12' });

    // At once: the very next request with the key.
    for (const [family, reply] of Object.entries(await eachFamily(key))) {
      expect(reply.status, `${family}: ${JSON.stringify(reply.body)}`).toBe(403);
      expect(JSON.stringify(reply.body), family).toContain('disabled');
    }
    expect((await api.post('/v1/images/async/generations', IMAGE)).body.error).toMatchObject({ code: 'user_disabled', param: 'Authorization' });
    // The session was ended; a new login is refused, and says why only to who knows the password.
    expect((await user.client.get('/api/user/self')).status).toBe(401);
    const login = await new Client(gw.url).post('/api/user/login', { username: user.username, password: user.password });
    expect(login.status).toBe(403);
    expect(login.body).toMatchObject({ success: false, code: 'user_disabled' });
    expect((await new Client(gw.url).post('/api/user/login', { username: user.username, password: 'wrong-password' })).status).toBe(401);

    // The list shows it; disabling again changes nothing.
    const listed = (await admin.get('/api/user/?size=100')).body.data.items.find((u: { id: string }) => u.id === user.userId);
    expect(listed).toMatchObject({ status: 'disabled', disabled_reason: 'abuse report #12', balance: 1_000_000 });
    expect((await admin.post(`/api/user/${user.userId}/disable`, { reason: 'again' })).body.data.disabled_reason).toBe('abuse report #12');

    // No body at all, as a browser's fetch sends it.
    const enabled = await admin.request('POST', `/api/user/${user.userId}/enable`);
    expect(enabled.body.data).toMatchObject({ status: 'enabled', disabled_reason: null });
    // The task submitted before the disable finished and was charged once.
    const done = await waitForImageTask(api, slow.body.id);
    expect(done.status).toBe('completed');
    await user.client.login(user.username, user.password);
    const figures = await eventually(async () => {
      const s = await self(user.client);
      return s.reserved_quota === 0 ? s : undefined;
    });
    expect(figures.used_quota).toBeGreaterThan(0);
    expect(figures.balance).toBe(1_000_000 - figures.used_quota);
    expect((await api.post('/v1/images/async/generations', IMAGE)).status).toBe(200);
  });

  it('an administrator cannot disable or delete their own user; bad input is a 4xx naming the field', async () => {
    const me = (await admin.get('/api/user/self')).body.data.id as string;
    const head = await gw.gateway.deps.events.headPosition();
    const own = await admin.post(`/api/user/${me}/disable`, { reason: 'oops' });
    expect(own.status).toBe(409);
    expect(own.body).toMatchObject({ success: false, code: 'cannot_change_self' });
    expect((await admin.delete(`/api/user/${me}`)).status).toBe(409);
    await expectNothingAppendedSince(gw, head, own);
    expect((await admin.post('/api/user/usr_nobody/disable', {})).status).toBe(404);
    const long = await admin.post(`/api/user/${me}/disable`, { reason: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain('reason');
    const group = await admin.put(`/api/user/${me}`, { group: 'not a group!' });
    expect(group.status).toBe(400);
    expect(group.body.message).toContain('group');
    // Users are not administrators.
    const user = await newUser(admin);
    expect((await user.client.post(`/api/user/${user.userId}/enable`)).status).toBe(403);
    expect((await user.client.get(`/api/token/?user_id=${me}`)).status).toBe(403);
  });

  it('a password reset ends the user’s sessions; a user changes their own, keeping this session and ending the others', async () => {
    const user = await newUser(admin);
    const reset = await admin.post(`/api/user/${user.userId}/password`, { password: 'reset-password-2' });
    expect(reset.status).toBe(200);
    expect((await user.client.get('/api/user/self')).status).toBe(401);
    expect((await new Client(gw.url).post('/api/user/login', { username: user.username, password: user.password })).status).toBe(401);
    const here = new Client(gw.url);
    await here.login(user.username, 'reset-password-2');
    const there = new Client(gw.url);
    await there.login(user.username, 'reset-password-2');

    const sessions = (await here.get('/api/user/self/sessions')).body.data as Array<{ id: string; current: boolean; started_at: string; expires_at: number }>;
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    expect(sessions.every((s) => s.id.length === 12 && !Number.isNaN(Date.parse(s.started_at)) && s.expires_at > Date.now() / 1000)).toBe(true);

    const wrong = await here.post('/api/user/self/password', { old_password: 'not-it-at-all', new_password: 'changed-password-3' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ success: false, code: 'wrong_password' });
    expect(wrong.body.message).toContain('old_password');
    const short = await here.post('/api/user/self/password', { old_password: 'reset-password-2', new_password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('new_password');

    const changed = await here.post('/api/user/self/password', { old_password: 'reset-password-2', new_password: 'changed-password-3' });
    expect(changed.status).toBe(200);
    expect((await here.get('/api/user/self')).status).toBe(200);
    expect((await there.get('/api/user/self')).status).toBe(401);
    expect((await here.get('/api/user/self/sessions')).body.data).toHaveLength(1);
    await new Client(gw.url).login(user.username, 'changed-password-3');
  });

  it('a group change moves the user’s keys in the old group; a key an administrator put elsewhere stays', async () => {
    const user = await newUser(admin, { group: 'default' });
    const plain = await newToken(user.client);
    const elsewhere = await admin.post('/api/token/', { name: 'vip key of the admin', group: 'vip' });
    expect(elsewhere.status).toBe(200);
    const changed = await admin.put(`/api/user/${user.userId}`, { group: 'vip' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data.group).toBe('vip');
    const keys = (await admin.get(`/api/token/?user_id=${user.userId}`)).body.data.items as Array<{ id: string; group: string }>;
    expect(keys.map((k) => [k.id, k.group])).toEqual([[plain.id, 'vip']]);
    expect((await user.client.get('/api/user/self')).body.data.group).toBe('vip');
    // Back again: the key follows; a change to the same group changes nothing.
    await admin.put(`/api/user/${user.userId}`, { group: 'default' });
    const head = await gw.gateway.deps.events.headPosition();
    const same = await admin.put(`/api/user/${user.userId}`, { group: 'default' });
    await expectNothingAppendedSince(gw, head, same);
    expect((await admin.get(`/api/token/?user_id=${user.userId}`)).body.data.items[0].group).toBe('default');
  });

  it('a debit needs a reason, never takes what is reserved, and shows in the ledger with its reason', async () => {
    const user = await newUser(admin, { credit: 100_000 });
    const head = await gw.gateway.deps.events.headPosition();
    const noReason = await admin.post('/api/admin/debits', { user_id: user.userId, amount: 10 });
    expect(noReason.status).toBe(400);
    expect(noReason.body.message).toContain('reason');
    const tooMuch = await admin.post('/api/admin/debits', { user_id: user.userId, amount: 100_001, reason: 'refund reversal' });
    expect(tooMuch.status).toBe(402);
    expect(tooMuch.body).toMatchObject({ success: false, code: 'insufficient_quota' });
    expect(tooMuch.body.message).toContain('amount');
    await expectNothingAppendedSince(gw, head, tooMuch);

    // A task holds a reservation: the debit may take only what is left.
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const held = await api.post('/v1/images/async/generations', { ...IMAGE, prompt: 'held [sim:slow]' });
    expect(held.status).toBe(200);
    const reserved = (await self(user.client)).reserved_quota;
    expect(reserved).toBeGreaterThan(0);
    expect((await admin.post('/api/admin/debits', { user_id: user.userId, amount: 100_000 - reserved + 1, reason: 'too much' })).status).toBe(402);

    const debit = await admin.post('/api/admin/debits', { user_id: user.userId, amount: 1_234, reason: 'chargeback 2026-11', debit_id: 'db-test-1' });
    expect(debit.status).toBe(200);
    expect(debit.body.data).toMatchObject({ account_id: user.accountId, balance: 100_000 - 1_234 });
    // Retried with the same id: applied once.
    expect(
      (await admin.post('/api/admin/debits', { user_id: user.userId, amount: 1_234, reason: 'chargeback 2026-11', debit_id: 'db-test-1' })).body.data.balance,
    ).toBe(100_000 - 1_234);
    const ledger = (await user.client.get('/api/billing/ledger')).body.data.items as Array<{
      kind?: string;
      type?: string;
      amount: number;
      note: string | null;
    }>;
    const row = ledger.find((r) => r.note === 'chargeback 2026-11');
    expect(row, JSON.stringify(ledger)).toBeDefined();
    expect(row!.amount).toBe(1_234);
    await waitForImageTask(api, held.body.id);
  });

  it('an administrator revokes another user’s key; a deleted user is gone for good but kept for the audit', async () => {
    const user = await newUser(admin, { credit: 10_000 });
    const first = await newToken(user.client);
    const second = await newToken(user.client);
    expect((await admin.delete(`/api/token/${first.id}`)).status).toBe(200);
    expect((await new Client(gw.url, first.key).get('/v1/models')).status).toBe(401);
    expect((await new Client(gw.url, second.key).get('/v1/models')).status).toBe(200);

    const deleted = await admin.delete(`/api/user/${user.userId}`);
    expect(deleted.body.data).toMatchObject({ status: 'deleted', balance: 10_000 });
    const refused = await new Client(gw.url, second.key).post('/v1/images/async/generations', IMAGE);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'invalid_api_key' });
    expect((await new Client(gw.url).post('/api/user/login', { username: user.username, password: user.password })).status).toBe(401);
    const enable = await admin.post(`/api/user/${user.userId}/enable`);
    expect(enable.status).toBe(409);
    expect(enable.body).toMatchObject({ code: 'user_deleted' });
    // The name stays taken.
    expect((await admin.post('/api/user/', { username: user.username, password: 'another-password' })).status).toBe(409);
  });

  it('administrators see each change on the event stream, without password hashes; a restart keeps every change', async () => {
    const user = await newUser(admin);
    await admin.post(`/api/user/${user.userId}/disable`, { reason: 'seen on the stream' });
    await admin.post(`/api/user/${user.userId}/password`, { password: 'streamed-password-1' });
    const events = await streamedEvents(admin, 200);
    const mine = events.filter((e) => e.key === user.userId);
    expect(mine.map((e) => e.type)).toEqual(['UserRegistered', 'UserDisabled', 'UserPasswordChanged']);
    expect(mine[1]).toMatchObject({ topic: 'gateway.user-admin-events.v1', data: { reason: 'seen on the stream' } });
    expect(JSON.stringify(events)).not.toMatch(/passwordHash|scrypt/);
    // A user's own stream shows none of it.
    const other = await newUser(admin);
    expect((await streamedEvents(other.client, 200)).filter((e) => e.topic === 'gateway.user-admin-events.v1')).toEqual([]);

    await gw.close();
    gw = await startGateway(ENGINE, { dataDir: dir.path, keepData: true });
    admin = await adminClient(gw);
    expect((await admin.get(`/api/user/${user.userId}`)).body.data).toMatchObject({ status: 'disabled', disabled_reason: 'seen on the stream' });
    expect((await new Client(gw.url).post('/api/user/login', { username: user.username, password: 'streamed-password-1' })).status).toBe(403);
  });
});

/** The events a session's stream replays from the beginning, read for `ms`. */
async function streamedEvents(client: Client, ms: number): Promise<Array<{ type: string; key: string; topic: string; data: Record<string, unknown> }>> {
  const controller = new AbortController();
  const res = await fetch(`${client.baseUrl}/api/events/stream?from=beginning`, { headers: { cookie: client.cookie ?? '' }, signal: controller.signal });
  expect(res.status).toBe(200);
  let text = '';
  const reader = res.body!.getReader();
  const stop = setTimeout(() => controller.abort(), ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } catch {
    /* aborted: read enough */
  } finally {
    clearTimeout(stop);
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}
