/**
 * The background processes of a started gateway, proven running there (not by calling a pass
 * by hand): `/readyz` shows each one's last successful pass, the reconciler releases an orphan
 * reservation on its own, and a keyed request killed mid-submit is finished by its retry.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotentTaskId } from '../../src/engine/tasks/idempotency.js';
import { quote } from '../../src/domain/pricing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startReceiver } from '../support/receiver.js';
import { withOverrides } from '../support/event-store-overrides.js';

const GRACE_SECONDS = 2;

interface Setup {
  gw: TestGateway;
  user: Awaited<ReturnType<typeof newUser>>;
  token: Awaited<ReturnType<typeof newToken>>;
  api: Client;
}
async function setup(graceSeconds: number): Promise<Setup> {
  const gw = await startGateway({
    SIM_STEP_MS: '20',
    POLL_INTERVAL_MS: '20',
    RESERVATION_GRACE_SECONDS: String(graceSeconds),
    ALLOW_LOOPBACK_OUTBOUND: '1',
    CALLBACK_CHECK_MS: '100',
  });
  const user = await newUser(await adminClient(gw), { credit: 1_000_000 });
  const token = await newToken(user.client);
  return { gw, user, token, api: new Client(gw.url, token.key) };
}
// A short grace, so the reconciler acts within a test; and the default-like one, under which a
// claim is resumed rather than given up.
let short: Setup;
let long: Setup;
beforeAll(async () => {
  short = await setup(GRACE_SECONDS);
  long = await setup(300);
});
afterAll(async () => {
  await short.gw.close();
  await long.gw.close();
});

/** The decision whose table lists each role's background processes. */
const BACKGROUND_DECISION = 'docs/decisions/0019-background-processes-per-role.md';

/** The names in the role's row of that table, in order. */
function documentedProcesses(role: string): string[] {
  const row = readFileSync(BACKGROUND_DECISION, 'utf8')
    .split('\n')
    .find((line) => line.trimStart().startsWith(`| \`${role}\``));
  if (!row) throw new Error(`${BACKGROUND_DECISION} has no background processes row for ${role}`);
  const cell = row.split('|')[2]!;
  // Qualifiers in parentheses (what a process also does, when it runs) are not names.
  return cell
    .replace(/\([^)]*\)/g, '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

const reservedOf = async (s: Setup) => (await s.user.client.get('/api/user/self')).body.data.reserved_quota as number;

/** What a process killed between the two appends of a submit leaves: a reservation, no task. */
async function orphanReservation(s: Setup, taskId: string, at: string): Promise<number> {
  const priced = quote(s.gw.gateway.deps.catalog.prices(), { model: 'anime-diffusion-4-5-full', group: 'default', units: 1 });
  await s.gw.gateway.deps.accounts.execute(
    s.user.accountId,
    {
      type: 'ReserveQuota',
      data: { reservationId: `res_${taskId}`, taskId, amount: priced.amount, model: 'anime-diffusion-4-5-full', tokenId: s.token.id, basis: priced.basis },
    },
    { at, accountId: s.user.accountId, correlationId: taskId },
  );
  return priced.amount;
}

describe('background processes in a started gateway', () => {
  it('/readyz reports every process of the role with a recent last pass', async () => {
    const { gw, api } = short;
    const receiver = await startReceiver(() => 200);
    try {
      const lyrics = await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: receiver.url });
      expect(lyrics.status).toBe(200);
      const image = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a cat', n: 1 });
      expect(image.status).toBe(200);
      await eventually(async () => ((await api.get(`/v1/images/async/generations/${image.body.id}`)).body.status === 'completed' ? true : undefined), 10_000);
      await eventually(async () => (receiver.received.length > 0 ? true : undefined), 10_000);
    } finally {
      await receiver.close();
    }
    const expected = [
      'projections',
      'settler',
      'poller',
      'dispatcher',
      'redispatch',
      'expiry',
      'deadlines',
      'callback-scheduler',
      'callbacks',
      'reconciler',
      'channel-health',
    ];
    const processes = await eventually(
      async () => {
        const body = (await (await fetch(`${gw.url}/readyz`)).json()) as { processes: Record<string, { last_pass: string | null }> };
        return expected.every((name) => body.processes[name]?.last_pass) ? body.processes : undefined;
      },
      10_000,
      100,
    );
    expect(Object.keys(processes).sort()).toEqual([...expected].sort());
    for (const name of expected) expect(Date.now() - Date.parse(processes[name]!.last_pass!), name).toBeLessThan(30_000);
    // The documented list of the role (docs/decisions/0019-background-processes-per-role.md) is this one: metrics runs only with METRICS_TOKEN.
    expect(documentedProcesses('all').filter((name) => name !== 'metrics')).toEqual(expected);
  });

  it('the reconciler releases, on its own, a reservation whose task never appeared', async () => {
    const before = await reservedOf(short);
    const taskId = `task_orphan_${Date.now()}`;
    const amount = await orphanReservation(short, taskId, new Date().toISOString());
    expect(await reservedOf(short)).toBe(before + amount);
    await eventually(async () => ((await reservedOf(short)) === before ? true : undefined), (GRACE_SECONDS + 5) * 1000, 100);
    const released = (await short.gw.gateway.deps.events.readStream(`account-${short.user.accountId}`)).find(
      (e) => e.type === 'QuotaReleased' && (e.data as { reservationId: string }).reservationId === `res_${taskId}`,
    );
    expect(released?.data).toMatchObject({ reason: 'task_never_submitted' });
  });

  const body = (prompt: string) => ({ model: 'anime-diffusion-4-5-full', prompt, n: 1 });

  it('a retry with the key of a request killed between its reservation and its task finishes it: one task, reserved and charged once', async () => {
    const { gw, api, token } = long;
    // What that request left: the reservation of its key's task, and no task.
    const taskId = idempotentTaskId(token.id, 'died-after-reserve', 0);
    await orphanReservation(long, taskId, new Date(Date.now() - 15_000).toISOString());
    const started = Date.now();
    const retry = await api.post('/v1/images/async/generations', body('resumed'), { 'idempotency-key': 'died-after-reserve' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(taskId);
    expect(Date.now() - started).toBeLessThan(5_000);
    await eventually(async () => ((await api.get(`/v1/images/async/generations/${taskId}`)).body.status === 'completed' ? true : undefined), 10_000);
    await eventually(async () => ((await reservedOf(long)) === 0 ? true : undefined), 10_000);
    const account = await gw.gateway.deps.events.readStream(`account-${long.user.accountId}`);
    expect(account.filter((e) => (e.data as { reservationId?: string }).reservationId === `res_${taskId}`).map((e) => e.type)).toEqual([
      'QuotaReserved',
      'QuotaSettled',
    ]);
    const again = await api.post('/v1/images/async/generations', body('resumed'), { 'idempotency-key': 'died-after-reserve' });
    expect(again.body.id).toBe(taskId);
    expect((await api.post('/v1/images/async/generations', body('another body'), { 'idempotency-key': 'died-after-reserve' })).status).toBe(409);
  });

  it('after the reconciler released such an orphan, a retry starts the key afresh under a new task', async () => {
    const { api, token } = short;
    const orphan = idempotentTaskId(token.id, 'died-long-ago', 0);
    await orphanReservation(short, orphan, new Date().toISOString());
    await eventually(async () => ((await reservedOf(short)) === 0 ? true : undefined), (GRACE_SECONDS + 5) * 1000, 100);
    const retry = await api.post('/v1/images/async/generations', body('fresh'), { 'idempotency-key': 'died-long-ago' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(idempotentTaskId(token.id, 'died-long-ago', 1));
    await eventually(async () => ((await api.get(`/v1/images/async/generations/${retry.body.id}`)).body.status === 'completed' ? true : undefined), 10_000);
    expect((await api.post('/v1/images/async/generations', body('fresh'), { 'idempotency-key': 'died-long-ago' })).body.id).toBe(retry.body.id);
  });

  it('a keyed submit refused for quota appends nothing; the same key goes through after a top-up', async () => {
    const { gw } = short;
    const admin = await adminClient(gw);
    const poor = await newUser(admin, { credit: 1 });
    const poorApi = new Client(gw.url, (await newToken(poor.client)).key);
    const head = await gw.gateway.deps.events.headPosition();
    const refused = await poorApi.post('/v1/images/async/generations', body('dear'), { 'idempotency-key': 'poor' });
    expect(refused.status).toBe(402);
    const requestId = refused.headers.get('x-request-id');
    expect((await gw.gateway.deps.events.readAll({ after: head })).filter((e) => e.metadata.requestId === requestId)).toEqual([]);
    expect((await admin.post('/api/admin/credits', { user_id: poor.userId, amount: 1_000_000 })).status).toBe(200);
    expect((await poorApi.post('/v1/images/async/generations', body('dear'), { 'idempotency-key': 'poor' })).status).toBe(200);
  });

  it('an Idempotency-Key request with a deeply nested body is answered, not a 500', async () => {
    const depth = 100_000;
    const text = `{"model":"anime-diffusion-4-5-full","prompt":"deep","n":1,"extra":${'['.repeat(depth)}"leaf"${']'.repeat(depth)}}`;
    const reply = await short.api.post('/v1/images/async/generations', text, { 'idempotency-key': 'deep' });
    expect(reply.status).toBeLessThan(500);
  });
});

describe('/readyz when a store stops answering', () => {
  it('answers 503 within a few seconds naming the store, instead of hanging', async () => {
    let hang = false;
    const gw = await startGateway(
      {},
      {
        wrapEventStore: (store) => withOverrides(store, { ping: () => (hang ? new Promise<void>(() => undefined) : store.ping()) }),
      },
    );
    try {
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
      hang = true;
      const started = Date.now();
      const r = await fetch(`${gw.url}/readyz`);
      expect(r.status).toBe(503);
      expect(((await r.json()) as { checks: Record<string, string> }).checks.events).toMatch(/no answer within/);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await gw.close();
    }
  });
});
