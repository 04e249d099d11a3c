/**
 * Starts the real gateway (embedded default) on a loopback port with a fresh data directory,
 * and a small HTTP client with a cookie jar for session routes.
 */
import { loadConfig, type Config } from '../../src/config.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { tempDir } from './tmp.js';

export const ADMIN_PASSWORD = 'admin-password-1';

export interface TestGateway {
  url: string;
  gateway: Gateway;
  dataDir: string;
  config: Config;
  close(): Promise<void>;
}

export async function startGateway(
  env: Record<string, string> = {},
  options: GatewayOptions & { dataDir?: string; keepData?: boolean } = {},
): Promise<TestGateway> {
  const dir = options.dataDir ? undefined : tempDir();
  const dataDir = options.dataDir ?? dir!.path;
  // Strict: an answer that drifts from its route's declared schema fails the request, so it fails
  // the test (vitest.config.ts sets RESPONSE_SCHEMAS for child processes; this config is built
  // from an explicit object and would otherwise default to 'log'). A test may still pass 'log'.
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    RESPONSE_SCHEMAS: 'strict',
    // Tests are about the embedded default with its simulator, whatever channels they add: the
    // default (`auto`) would take it away once a test created a real channel and restarted.
    SIMULATOR: '1',
    ...env,
  });
  const gateway = await createGateway(config, options);
  const url = await gateway.listen();
  return {
    url,
    gateway,
    dataDir,
    config,
    async close() {
      await gateway.close();
      if (!options.keepData) dir?.remove();
    },
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A client holding one session cookie (like a browser) and optionally a bearer key. */
export class Client {
  cookie: string | undefined;
  constructor(
    readonly baseUrl: string,
    public bearer?: string,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined && typeof body !== 'string') h['content-type'] = 'application/json';
    if (typeof body === 'string') h['content-type'] ??= 'application/json';
    if (this.cookie) h.cookie = this.cookie;
    if (this.bearer) h.authorization = `Bearer ${this.bearer}`;
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const [pair] = setCookie.split(';');
      this.cookie = pair && !/=\s*$/.test(pair) && !/Expires=Thu, 01 Jan 1970/i.test(setCookie) ? pair : undefined;
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('GET', path, undefined, headers);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.request<T>('POST', path, body ?? {}, headers);
  put = <T = any>(path: string, body?: unknown) => this.request<T>('PUT', path, body ?? {});
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);

  async login(username: string, password: string): Promise<Reply> {
    const reply = await this.post('/api/user/login', { username, password });
    if (reply.status !== 200) throw new Error(`login ${username} failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply;
  }
}

export async function adminClient(gw: TestGateway): Promise<Client> {
  const admin = new Client(gw.url);
  await admin.login('admin', ADMIN_PASSWORD);
  return admin;
}

let userCounter = 0;

/** Creates a user (through the admin API), credits it, logs it in; returns its client and ids. */
export async function newUser(admin: Client, options: { credit?: number; group?: string; password?: string } = {}) {
  const username = `user${process.pid}_${++userCounter}`;
  const password = options.password ?? 'user-password-1';
  const created = await admin.post('/api/user/', { username, password, ...(options.group ? { group: options.group } : {}) });
  if (created.status !== 200) throw new Error(`create user failed: ${created.status} ${JSON.stringify(created.body)}`);
  const userId: string = created.body.data.id;
  if (options.credit) {
    const credited = await admin.post('/api/admin/credits', { user_id: userId, amount: options.credit, note: 'test credit' });
    if (credited.status !== 200) throw new Error(`credit failed: ${JSON.stringify(credited.body)}`);
  }
  const client = new Client(admin.baseUrl);
  await client.login(username, password);
  return { client, username, password, userId, accountId: created.body.data.account_id as string };
}

/** Creates a token for the logged-in client; returns the full key and the record. */
export async function newToken(client: Client, body: Record<string, unknown> = {}) {
  const reply = await client.post('/api/token/', { name: 'test', unlimited_quota: true, ...body });
  if (reply.status !== 200) throw new Error(`create token failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { key: reply.body.data.key as string, id: reply.body.data.id as string, record: reply.body.data };
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A refused request appended nothing: no event after `head` was caused by it (its
 * `x-request-id` is every event's `metadata.requestId` in the request path). Background work
 * of earlier tests may append meanwhile; that is not this request's doing.
 */
export async function expectNothingAppendedSince(gw: TestGateway, head: bigint, reply: { headers: Headers }): Promise<void> {
  const requestId = reply.headers.get('x-request-id');
  if (!requestId) throw new Error('the reply carries no x-request-id');
  const after = await gw.gateway.deps.events.readAll({ after: head });
  const caused = after.filter((e) => e.metadata.requestId === requestId);
  if (caused.length > 0) throw new Error(`request ${requestId} appended ${caused.map((e) => `${e.type} to ${e.streamName}`).join(', ')}`);
}
