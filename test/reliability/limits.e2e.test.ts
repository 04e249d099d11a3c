/**
 * Bounds users expect, on the assembled gateway over loopback HTTP: a token's cap holds under
 * parallel submits, logins are throttled and small, the session cookie is Secure behind a
 * trusted TLS-terminating proxy, and a request trickled in is cut off while slow answers are not.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditAccounts } from '../../src/audit/audit.js';
import { loadConfig } from '../../src/config.js';
import { quote } from '../../src/domain/pricing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

const MODEL = 'anime-diffusion-4-5-full';

async function settledAndProjected(gw: TestGateway): Promise<void> {
  const head = await gw.gateway.deps.events.headPosition();
  await gw.gateway.engine.settler.caughtUp(head);
  await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
}

describe('a token cap under parallel submits', () => {
  let gw: TestGateway;
  let session: Client;
  let accountId: string;
  let price: number;
  /** Polls with a key of the same account: an exhausted token is refused on every route. */
  let poller: Client;

  beforeAll(async () => {
    gw = await startGateway(FAST_ENGINE);
    const admin = await adminClient(gw);
    ({ client: session, accountId } = await newUser(admin, { credit: 100_000_000 }));
    poller = new Client(gw.url, (await newToken(session)).key);
    price = quote(gw.gateway.deps.catalog.prices(), { model: MODEL, group: 'default', units: 1 }).amount;
    expect(price).toBeGreaterThan(0);
  });
  afterAll(() => gw.close());

  const submit = (api: Client, i: number) => api.post('/v1/images/async/generations', { model: MODEL, prompt: `cap ${i}`, n: 1 });

  it('50 parallel submits with a cap covering 5 accept exactly 5; used quota never passes the cap', async () => {
    const cap = 5 * price;
    const token = await newToken(session, { unlimited_quota: false, remain_quota: cap });
    const api = new Client(gw.url, token.key);

    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => submit(api, i)));
    const accepted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status !== 200);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(45);
    for (const r of refused) {
      expect(r.status).toBe(403);
      // A refused async submit answers code invalid_request (spec 7); the precise code is reason.
      expect(r.body).toMatchObject({ code: 'invalid_request', reason: 'token_quota_exhausted' });
    }

    // Only the accepted submits reserved, all with this token; none of the refused appended.
    const reserved = (await gw.gateway.deps.events.readStream(`account-${accountId}`)).filter((e) => e.type === 'QuotaReserved');
    expect(reserved.map((e) => (e.data as { tokenId?: string }).tokenId)).toEqual(Array(5).fill(token.id));

    for (const r of accepted) expect((await waitForImageTask(poller, r.body.id)).status).toBe('completed');
    await settledAndProjected(gw);
    const [view] = (await session.get('/api/token/')).body.data.items.filter((t: { id: string }) => t.id === token.id);
    expect(view).toMatchObject({ used_quota: cap, remain_quota: 0 });

    // The audit replays the account stream with the aggregate's fold and agrees with the views.
    const report = await auditAccounts(gw.gateway.deps.events, gw.gateway.deps.views, { accountId });
    expect(report.discrepancies).toEqual([]);
    expect(report.accounts[0]!.charged).toBe(cap);
  });

  it('a PUT that sets remain_quota starts the count again, and the new cap holds under parallel submits too', async () => {
    const token = await newToken(session, { unlimited_quota: false, remain_quota: price });
    const api = new Client(gw.url, token.key);
    const first = await submit(api, 0);
    expect(first.status).toBe(200);
    await waitForImageTask(poller, first.body.id);
    await settledAndProjected(gw);

    expect((await session.put('/api/token/', { id: token.id, remain_quota: 2 * price })).status).toBe(200);
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(api, i)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    expect(replies.filter((r) => r.status === 403 && r.body.reason === 'token_quota_exhausted')).toHaveLength(8);
    for (const r of replies.filter((x) => x.status === 200)) await waitForImageTask(poller, r.body.id);
    await settledAndProjected(gw);
    const [view] = (await session.get('/api/token/')).body.data.items.filter((t: { id: string }) => t.id === token.id);
    expect(view).toMatchObject({ used_quota: 3 * price, remain_quota: 0 });
  });

  it('an unlimited token is bounded only by the account balance', async () => {
    const api = new Client(gw.url, (await newToken(session, { unlimited_quota: true, remain_quota: 0 })).key);
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(api, i)));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
  });
});

/** A login attempt from `address` (believed through X-Forwarded-For only where TRUST_PROXY says so). */
function login(gw: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return new Client(gw.url).post('/api/user/login', body, headers);
}

describe('login throttling (TRUST_PROXY=127.0.0.1, LOGIN_RATE_LIMIT=4, LOGIN_RATE_LIMIT_PER_USER=3)', () => {
  let gw: TestGateway;
  const username = 'throttled-user';
  const password = 'throttled-password-1';

  beforeAll(async () => {
    gw = await startGateway({ TRUST_PROXY: '127.0.0.1', LOGIN_RATE_LIMIT: '4', LOGIN_RATE_LIMIT_PER_USER: '3' });
    const admin = await adminClient(gw);
    // Created without logging in, so none of its attempts are used up yet.
    expect((await admin.post('/api/user/', { username, password })).status).toBe(200);
  });
  afterAll(() => gw.close());

  it('a username gets LOGIN_RATE_LIMIT_PER_USER attempts a minute, from any address; then 429 with Retry-After', async () => {
    const wrong = await Promise.all([1, 2, 3].map((i) => login(gw, { username, password: 'wrong-password' }, { 'x-forwarded-for': `198.51.100.${i}` })));
    expect(wrong.map((r) => r.status)).toEqual([401, 401, 401]);
    // The fourth, even with the right password and from a fresh address, is refused before any password work.
    const started = Date.now();
    const limited = await login(gw, { username: username.toUpperCase(), password }, { 'x-forwarded-for': '198.51.100.4' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      success: false,
      message: expect.stringMatching(/too many login attempts for this username: retry in \d+ s/),
      code: 'rate_limited',
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('set-cookie')).toBeNull();
    expect(Date.now() - started).toBeLessThan(1000);
    // Another username is not held back by it.
    expect((await login(gw, { username: 'someone-else', password: 'whatever-1' }, { 'x-forwarded-for': '198.51.100.5' })).status).toBe(401);
  });

  it('an address gets LOGIN_RATE_LIMIT attempts a minute, whatever the usernames; another address is not affected', async () => {
    const from = { 'x-forwarded-for': '203.0.113.7' };
    const tries = [];
    for (let i = 0; i < 4; i++) tries.push((await login(gw, { username: `nobody${i}`, password: 'whatever-1' }, from)).status);
    expect(tries).toEqual([401, 401, 401, 401]);
    const limited = await login(gw, { username: 'nobody9', password: 'whatever-1' }, from);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, code: 'rate_limited', message: expect.stringContaining('from this address') });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Even a body the schema refuses is counted, and refused the same way.
    expect((await login(gw, {}, from)).status).toBe(429);
    expect((await login(gw, { username: 'nobody9', password: 'whatever-1' }, { 'x-forwarded-for': '203.0.113.8' })).status).toBe(401);
  });

  it('a login body above a few KiB is refused with 413 before any password work; a password above 128 characters with 400', async () => {
    const from = { 'x-forwarded-for': '192.0.2.10' };
    const huge = await login(gw, { username: 'admin', password: 'x'.repeat(100 * 1024) }, from);
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ success: false, code: 'request_too_large' });
    const long = await login(gw, { username: 'admin', password: 'x'.repeat(129) }, { 'x-forwarded-for': '192.0.2.11' });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ success: false, message: expect.stringContaining('password') });
  });
});

describe('the session cookie behind a TLS-terminating proxy', () => {
  const https = { 'x-forwarded-proto': 'https' };
  const cookieOf = async (gw: TestGateway, headers: Record<string, string> = {}) => {
    const reply = await new Client(gw.url).post('/api/user/login', { username: 'admin', password: 'admin-password-1' }, headers);
    expect(reply.status).toBe(200);
    return reply.headers.get('set-cookie') ?? '';
  };
  const gateways: TestGateway[] = [];
  const start = async (env: Record<string, string>) => {
    const gw = await startGateway(env);
    gateways.push(gw);
    return gw;
  };
  afterAll(() => Promise.all(gateways.map((gw) => gw.close())));

  it('by default (no TRUST_PROXY) X-Forwarded-Proto is not believed: no Secure over plain http', async () => {
    const gw = await start({});
    expect(await cookieOf(gw, https)).not.toMatch(/;\s*Secure/i);
  });

  it('TRUST_PROXY naming the proxy: Secure when it forwarded https, not when it forwarded http', async () => {
    const gw = await start({ TRUST_PROXY: '127.0.0.0/8, ::1' });
    expect(await cookieOf(gw, https)).toMatch(/;\s*Secure/i);
    expect(await cookieOf(gw, { 'x-forwarded-proto': 'http' })).not.toMatch(/;\s*Secure/i);
    expect(await cookieOf(gw)).not.toMatch(/;\s*Secure/i);
    // Logging out clears it with the same attributes.
    const c = new Client(gw.url);
    await c.post('/api/user/login', { username: 'admin', password: 'admin-password-1' }, https);
    const out = await fetch(`${gw.url}/api/user/logout`, { method: 'POST', headers: { cookie: c.cookie!, ...https } });
    expect(out.headers.get('set-cookie')).toMatch(/^gw_session=;.*Secure/i);
  });

  it('TRUST_PROXY as a hop count believes the nearest proxy', async () => {
    const gw = await start({ TRUST_PROXY: '1', LOGIN_RATE_LIMIT: '1' });
    expect(await cookieOf(gw, https)).toMatch(/;\s*Secure/i);
    // The client address is the forwarded one: each gets its own login budget.
    expect((await login(gw, { username: 'nobody', password: 'whatever-1' }, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(401);
    expect((await login(gw, { username: 'nobody', password: 'whatever-1' }, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(401);
    expect((await login(gw, { username: 'nobody', password: 'whatever-1' }, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(429);
  });

  it('SESSION_COOKIE_SECURE=always is Secure over plain http; =never is not, even for forwarded https', async () => {
    const always = await start({ SESSION_COOKIE_SECURE: 'always' });
    expect(await cookieOf(always)).toMatch(/;\s*Secure/i);
    const never = await start({ SESSION_COOKIE_SECURE: 'never', TRUST_PROXY: 'true' });
    expect(await cookieOf(never, https)).not.toMatch(/;\s*Secure/i);
  });

  it('refuses a TRUST_PROXY or SESSION_COOKIE_SECURE it does not understand', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,loopback' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ SESSION_COOKIE_SECURE: 'yes' })).toThrow(/SESSION_COOKIE_SECURE/);
  });
});

/** Sends the head of a request, then the body a byte every `everyMs`; resolves when the server closes. */
function trickle(url: string, head: string, everyMs: number): Promise<{ elapsedMs: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const started = Date.now();
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => socket.writable && socket.write('x'), everyMs);
    });
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ elapsedMs: Date.now() - started, answer });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 20 s; answered ${JSON.stringify(answer)}`));
    }, 20_000);
  });
}

describe('request timeouts (REQUEST_TIMEOUT_MS=1000)', () => {
  let gw: TestGateway;
  let session: Client;
  let api: Client;

  beforeAll(async () => {
    // A synchronous [sim:slow] call takes 2 steps × 5 × 300 ms = 3 s, three times the bound.
    gw = await startGateway({ REQUEST_TIMEOUT_MS: '1000', SIM_STEP_MS: '300', POLL_INTERVAL_MS: '50' });
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 100_000_000 });
    session = user.client;
    api = new Client(gw.url, (await newToken(session)).key);
  });
  afterAll(() => gw.close());

  it('a body trickled in is cut off within the bound (408 and the connection closed)', async () => {
    const head = 'POST /api/user/logout HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const { elapsedMs, answer } = await trickle(gw.url, head, 100);
    expect(elapsedMs).toBeGreaterThanOrEqual(900);
    expect(elapsedMs).toBeLessThan(3000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('headers trickled in are cut off within the bound too', async () => {
    const { elapsedMs } = await trickle(gw.url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', 100);
    expect(elapsedMs).toBeLessThan(3000);
  });

  it('a synchronous generation call that takes three times the bound still answers', async () => {
    const started = Date.now();
    const r = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'a slow one [sim:slow]' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(Date.now() - started).toBeGreaterThan(2000);
  });

  it('an SSE stream stays open past the bound and still delivers events', async () => {
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/api/events/stream`, { headers: { cookie: session.cookie! }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 2500));
    const submitted = await api.post('/v1/images/async/generations', { model: MODEL, prompt: 'after the bound', n: 1 });
    expect(submitted.status).toBe(200);
    await eventually(async () => (text.includes(submitted.body.id) ? true : undefined), 10_000);
    controller.abort();
    await reading;
  });
});
