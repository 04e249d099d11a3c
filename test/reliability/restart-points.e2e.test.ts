/**
 * A restart after each kind of event being the newest in the store.
 *
 * One gateway run produces (nearly) every kind of event the catalog has. Then, for each kind,
 * the event log is cut right after the last event of that kind — exactly what the store holds
 * when a process dies just after that append — the views are dropped (the furthest they can
 * lag), and a gateway is started on it with the data directory's secrets (the channel keys
 * secret, the asset signing key). It must become ready quickly: start-up and adoption wait only
 * for what the projections consume, never for an event they never fold (an `idem-` claim an
 * earlier version wrote); and it must work: a task submitted after each restart completes on
 * the seeded channel (whose key only the kept secret decrypts) and is charged exactly once.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startReceiver } from '../support/receiver.js';
import { tempDir } from '../support/tmp.js';
import { recordReliability } from '../support/reliability-summary.js';
import { appendEvents } from '../../src/engine/commands/append.js';
import { GENERATED_SECRET_FILE } from '../../src/engine/channels/channel-key-secret.js';
import { waitForImageTask } from '../support/images.js';

const ENV = {
  SIM_STEP_MS: '20',
  POLL_INTERVAL_MS: '20',
  ASSET_RETENTION_SECONDS: '1',
  ALLOW_LOOPBACK_OUTBOUND: '1',
  CALLBACK_RETRY_SCHEDULE: '1',
  CALLBACK_CHECK_MS: '100',
};
/** A start that waits for something the views never show would hang here, not for minutes. */
const START_BUDGET_MS = 20_000;

const dirs: Array<{ remove(): void }> = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  for (const d of dirs) d.remove();
});

async function startWithin(env: Record<string, string>, dataDir: string): Promise<TestGateway> {
  let timer: NodeJS.Timeout | undefined;
  const gw = await Promise.race([
    startGateway(env, { dataDir, keepData: true }),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not started within ${START_BUDGET_MS} ms`)), START_BUDGET_MS))),
  ]).finally(() => clearTimeout(timer));
  cleanups.push(() => gw.close());
  return gw;
}

/** The data directory's secrets: a gateway restarted without them can use none of its channels. */
const SECRET_FILES = [GENERATED_SECRET_FILE, 'asset-signing.key'];

/** A restarted gateway works: a new user's task completes upstream and is charged exactly once. */
async function expectTaskCompletesChargedOnce(gw: TestGateway, label: string): Promise<void> {
  const credit = 1_000_000;
  const user = await newUser(await adminClient(gw), { credit });
  const api = new Client(gw.url, (await newToken(user.client)).key);
  const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `after a restart (${label})`, n: 1 });
  expect(r.status, `${label}: ${JSON.stringify(r.body)}`).toBe(200);
  const done = await waitForImageTask(api, r.body.id, 15_000);
  expect(done.status, `${label}: ${JSON.stringify(done.error)}`).toBe('completed');
  const account = await eventually(async () => {
    const events = await gw.gateway.deps.events.readStream(`account-${user.accountId}`);
    return events.some((e) => e.type === 'QuotaSettled') ? events : undefined;
  });
  const reserved = account.filter((e) => e.type === 'QuotaReserved');
  const settled = account.filter((e) => e.type === 'QuotaSettled').map((e) => e.data as { charged: number });
  expect(reserved, label).toHaveLength(1);
  expect(settled, label).toHaveLength(1);
  expect(settled[0]!.charged, label).toBeGreaterThan(0);
  const self = await user.client.get('/api/user/self');
  expect(self.body.data, label).toMatchObject({ quota: credit - settled[0]!.charged, used_quota: settled[0]!.charged, reserved_quota: 0 });
}

/** Produces every kind of event the product appends in normal use and in refusals. */
async function produceEveryKind(gw: TestGateway): Promise<void> {
  const admin = await adminClient(gw);
  const failing = await startReceiver(() => 500);
  const receiving = await startReceiver(() => 200);
  cleanups.push(
    () => failing.close(),
    () => receiving.close(),
  );
  const user = await newUser(admin, { credit: 1_000_000 });
  const token = await newToken(user.client);
  const api = new Client(gw.url, token.key);

  await user.client.put('/api/token/', { id: token.id, name: 'renamed' });
  await user.client.delete(`/api/token/${(await newToken(user.client)).id}`);
  await user.client.post('/api/user/webhook-secret/rotate');
  const channel = await admin.post('/api/channel/', { name: 'spare', family: 'images', base_url: 'http://example.com', models: ['m'] });
  await admin.put('/api/channel/', { id: channel.body.data.id, name: 'spare 2' });
  await admin.delete(`/api/channel/${channel.body.data.id}`);
  await admin.put('/api/pricing', { models: { 'spare-model': { unit: 'image', price: 1 } } });

  const ids: string[] = [];
  // `[sim:slow]`: a task seen in progress (the others may finish between two polls on a busy machine).
  for (const prompt of ['fine', 'fails [sim:fail]', 'first channel down [sim:5xx]', 'in progress a while [sim:slow]']) {
    ids.push(
      (await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1 }, { 'idempotency-key': `k-${prompt}` })).body.id,
    );
  }
  // A store an earlier version wrote holds idempotency claims no projection folds.
  await appendEvents(
    gw.gateway.deps.events,
    'idem-0123abcd',
    [{ type: 'IdempotencyKeyClaimed', data: { taskId: 'task_fromanolderversion0000', requestHash: 'h', tokenId: 'tok' } }],
    {
      expectedRevision: 'no_stream',
      metadata: { at: new Date().toISOString() },
    },
  );
  // Callbacks: one delivered, one dead-lettered after its single retry.
  await api.post('/tune/submit/LYRICS', { prompt: 'a delivered song', hookUrl: receiving.url });
  await api.post('/tune/submit/LYRICS', { prompt: 'an undeliverable song', hookUrl: failing.url });

  await eventually(async () => {
    const states = await Promise.all(ids.map(async (id) => (await api.get(`/v1/images/async/generations/${id}`)).body.status));
    return states.every((s) => s === 'completed' || s === 'failed') ? true : undefined;
  }, 20_000);
  const types = async () => new Set((await gw.gateway.deps.events.readAll()).map((e) => e.type));
  await eventually(
    async () => {
      const seen = await types();
      return ['AssetsExpired', 'CallbackDelivered', 'CallbackDeadLettered'].every((t) => seen.has(t)) ? true : undefined;
    },
    20_000,
    100,
  );
  await user.client.post('/api/user/logout');
}

describe('restart with each kind of event the newest in the store', () => {
  it('the newest event is one no projection folds (an idempotency claim an earlier version wrote): ready at once', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = await startGateway(ENV, { dataDir: dir.path, keepData: true });
    await appendEvents(
      first.gateway.deps.events,
      'idem-0123abcd',
      [{ type: 'IdempotencyKeyClaimed', data: { taskId: 'task_fromanolderversion0000', requestHash: 'h', tokenId: 'tok' } }],
      {
        expectedRevision: 'no_stream',
        metadata: { at: new Date().toISOString() },
      },
    );
    expect((await first.gateway.deps.events.readAll()).at(-1)!.type).toBe('IdempotencyKeyClaimed');
    await first.close();

    const started = Date.now();
    const again = await startWithin(ENV, dir.path);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    await expectTaskCompletesChargedOnce(again, 'idempotency claim newest');
  }, 60_000);

  it('every kind of event as the newest, views dropped, secrets kept: the gateway starts, is ready, and completes a task charged once', async () => {
    const source = tempDir();
    dirs.push(source);
    const first = await startGateway(ENV, { dataDir: source.path, keepData: true });
    await produceEveryKind(first);
    await first.close();

    const db = new Database(join(source.path, 'events.sqlite'), { readonly: true });
    const lastOfType = db.prepare('SELECT type, max(position) AS position FROM events GROUP BY type').all() as Array<{ type: string; position: number }>;
    db.close();
    const kinds = lastOfType.map((r) => r.type);
    // Everything the product appends in normal use (QuotaDebited has no route yet, and
    // IdempotencyKeyReleased is only in stores an earlier version wrote).
    for (const expected of [
      'IdempotencyKeyClaimed',
      'TaskSubmitted',
      'UpstreamSubmitted',
      'UpstreamSubmitFailed',
      'TaskProgressed',
      'TaskSucceeded',
      'TaskFailed',
      'AssetsExpired',
      'QuotaReserved',
      'QuotaSettled',
      'QuotaReleased',
      'QuotaCredited',
      'AccountOpened',
      'UserRegistered',
      'UserSessionStarted',
      'UserSessionEnded',
      'TokenCreated',
      'TokenUpdated',
      'TokenDeleted',
      'ChannelCreated',
      'ChannelUpdated',
      'ChannelDeleted',
      'PricesSet',
      'CallbackScheduled',
      'CallbackAttempted',
      'CallbackDelivered',
      'CallbackDeadLettered',
      'WebhookSecretRotated',
    ]) {
      expect(kinds, `the first run produced no ${expected}`).toContain(expected);
    }

    const timings: string[] = [];
    for (const { type, position } of lastOfType) {
      const dir = tempDir();
      dirs.push(dir);
      mkdirSync(dir.path, { recursive: true });
      copyFileSync(join(source.path, 'events.sqlite'), join(dir.path, 'events.sqlite'));
      for (const file of SECRET_FILES) {
        expect(existsSync(join(source.path, file)), `the first run wrote no ${file}`).toBe(true);
        copyFileSync(join(source.path, file), join(dir.path, file));
      }
      const cut = new Database(join(dir.path, 'events.sqlite'));
      cut.prepare('DELETE FROM events WHERE position > ?').run(position);
      cut.close();

      const started = Date.now();
      const gw = await startWithin({ ...ENV, ADMIN_PASSWORD }, dir.path).catch((err: unknown) => {
        throw new Error(`start with ${type} as the newest event: ${String(err)}`);
      });
      const ready = await fetch(`${gw.url}/readyz`);
      expect(ready.status, `readyz with ${type} newest`).toBe(200);
      timings.push(`${type}:${Date.now() - started}ms`);
      await expectTaskCompletesChargedOnce(gw, `${type} newest`);
      await gw.close();
      cleanups.pop();
    }
    recordReliability({ suite: 'restart-points', invariants: 2 * lastOfType.length });
    console.log(`[restart-points] ${lastOfType.length} kinds of newest event, each started and completed a task charged once: ${timings.join(' ')}`);
  }, 240_000);
});
