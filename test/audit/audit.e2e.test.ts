import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditAccounts } from '../../src/audit/audit.js';
import { auditUsers } from '../../src/audit/users.js';
import { rebuildViews } from '../../src/audit/rebuild.js';
import { familyProjections } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { embeddedEnv } from '../support/child-gateway.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

const run = promisify(execFile);
let gw: TestGateway;
let accountId: string;
let session: Client;
let other: { userId: string };

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { keepData: true });
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 2_000_000 });
  accountId = user.accountId;
  session = user.client;
  const api = new Client(gw.url, (await newToken(user.client)).key);
  // A mixed workload: successes, failures, a partial result, an extra credit.
  const prompts = ['ok one', 'ok two [sim:slow]', 'bad [sim:fail]', 'fewer [sim:partial]', 'refused [sim:reject]'];
  const ids = [];
  for (const prompt of prompts) ids.push((await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 3 })).body.id);
  await admin.post('/api/admin/credits', { user_id: user.userId, amount: 12_345, note: 'goodwill' });
  // Administration: a debit with its reason; another user disabled, moved to another group, given a new password.
  expect((await admin.post('/api/admin/debits', { user_id: user.userId, amount: 2_000, reason: 'correction' })).status).toBe(200);
  other = await newUser(admin);
  await admin.post(`/api/user/${other.userId}/disable`, { reason: 'audited' });
  await admin.put(`/api/user/${other.userId}`, { group: 'vip' });
  await admin.post(`/api/user/${other.userId}/password`, { password: 'audited-password-1' });
  for (const id of ids) await waitForImageTask(api, id);
  await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
  await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
});
afterAll(async () => {
  await gw.close();
  const { rmSync } = await import('node:fs');
  rmSync(gw.dataDir, { recursive: true, force: true });
});

describe('billing audit', () => {
  it('after a mixed workload the audit finds no discrepancy', async () => {
    const report = await auditAccounts(gw.gateway.deps.events, gw.gateway.deps.views);
    expect(report.discrepancies).toEqual([]);
    const mine = report.accounts.find((a) => a.accountId === accountId)!;
    expect(mine.credited).toBe(2_000_000 + 12_345);
    expect(mine.charged).toBe((3 + 3 + 2) * 10_000);
    expect(mine.debited).toBe(2_000);
    // A debit leaves the balance like a charge, and counts in the used quota (the ledger tells them apart).
    expect(mine.replayed).toEqual({ balance: 2_012_345 - 2_000 - 80_000, reserved: 0, usedQuota: 82_000 });
    const users = await auditUsers(gw.gateway.deps.events, gw.gateway.deps.views);
    expect(users.discrepancies).toEqual([]);
    expect(users.users).toBeGreaterThanOrEqual(3);
  });

  it('a users view that disagrees with the user streams is named, field by field, no hash printed', async () => {
    const { views } = gw.gateway.deps;
    const doc = (await views.get<Record<string, unknown>>('users', other.userId))!;
    expect(doc.doc).toMatchObject({ status: 'disabled', group: 'vip' });
    const corrupt = { ...doc.doc, status: 'enabled', passwordHash: 'scrypt$forged' };
    await views.commit('test-corruption', [{ view: 'users', id: other.userId, position: doc.position + 1_000_000n, doc: corrupt }], undefined);
    const report = await auditUsers(gw.gateway.deps.events, views);
    expect(report.discrepancies).toEqual([
      { userId: other.userId, differences: ['status: view enabled, replay disabled', 'password: the view holds another than the replayed one'] },
    ]);
    await views.commit('test-corruption', [{ view: 'users', id: other.userId, position: doc.position + 2_000_000n, doc: doc.doc }], undefined);
  });

  it('the statement API lists every movement with its task, model and basis', async () => {
    const r = await session.get('/api/billing/ledger?size=100');
    expect(r.status).toBe(200);
    const items = r.body.data.items;
    expect(items.map((i: { type: string }) => i.type).filter((t: string) => t === 'QuotaReserved')).toHaveLength(5);
    const settled = items.filter((i: { type: string }) => i.type === 'QuotaSettled');
    expect(settled).toHaveLength(3);
    for (const s of settled)
      expect(s).toMatchObject({ model: 'anime-diffusion-4-5-full', task_id: expect.stringMatching(/^task_/), basis: { unit: 'image', unitPrice: 10_000 } });
    expect(items.reduce((sum: number, i: { balance_delta: number }) => sum + i.balance_delta, 0)).toBe(2_012_345 - 2_000 - 80_000);
    expect(items.find((i: { type: string }) => i.type === 'QuotaDebited')).toMatchObject({ amount: 2_000, balance_delta: -2_000, note: 'correction' });
    const byTask = await session.get(`/api/billing/ledger?task_id=${settled[0].task_id}`);
    expect(byTask.body.data.items.map((i: { type: string }) => i.type).sort()).toEqual(['QuotaReserved', 'QuotaSettled']);
    const future = await session.get('/api/billing/ledger?from=2999-01-01');
    expect(future.body.data.items).toEqual([]);
    expect((await session.get('/api/billing/ledger?from=yesterday-ish')).status).toBe(400);
  });

  it('a view corrupted on purpose is named, with the difference', async () => {
    const { views } = gw.gateway.deps;
    const doc = (await views.get<Record<string, unknown>>('accounts', accountId))!;
    await views.commit(
      'test-corruption',
      [{ view: 'accounts', id: accountId, position: doc.position + 1_000_000n, doc: { ...doc.doc, balance: (doc.doc.balance as number) + 77 } }],
      undefined,
    );
    const report = await auditAccounts(gw.gateway.deps.events, views);
    expect(report.discrepancies.map((d) => d.accountId)).toEqual([accountId]);
    expect(report.discrepancies[0]!.differences.join()).toMatch(/balance: view \d+, replay \d+ \(difference 77\)/);
  });

  it('`npm run audit` exits 1 and names the account; with --csv it writes the figures', async () => {
    // Without the backends' URLs CI exports (MONGO_URL would send the audit to that server's views).
    const env = { ...embeddedEnv(), DATA_DIR: gw.dataDir };
    const csv = `${gw.dataDir}/audit.csv`;
    const failed = await run('node', ['--import', 'tsx', 'scripts/audit.ts', '--csv', csv], { env }).then(
      () => ({ code: 0, stdout: '' }),
      (err: { code: number; stdout: string }) => err,
    );
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`DISCREPANCY account ${accountId}`);
    expect(failed.stdout).toMatch(/audited \d+ users/);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(csv, 'utf8')).toContain(`${accountId},`);
  });

  it('rebuilding every view from scratch gives documents deep-equal to the originals', async () => {
    const { events, views } = gw.gateway.deps;
    // Undo the deliberate corruption first: rebuild the accounts view alone, then snapshot.
    const projections = [...coreProjections, ...familyProjections];
    await gw.gateway.engine.stop();
    await gw.gateway.deps.runner.stop();
    const log = pino({ level: 'silent' });
    await rebuildViews(
      { events, views, log },
      projections.filter((p) => p.view === 'accounts'),
    );
    const snapshot = async () => {
      const all: Record<string, unknown> = {};
      for (const p of projections)
        all[p.view] = (await views.find(p.view, {}, { limit: 1_000_000 })).map((d) => ({ id: d.id, doc: d.doc })).sort((a, b) => a.id.localeCompare(b.id));
      return all;
    };
    const before = await snapshot();
    expect((before.accounts as unknown[]).length).toBeGreaterThan(0);
    await rebuildViews({ events, views, log }, projections);
    expect(await snapshot()).toEqual(before);
    expect((await auditAccounts(events, views)).discrepancies).toEqual([]);
    // Over its memory bound the fold writes documents out and, on later pages, reads them back: the same views.
    const spilled = await rebuildViews({ events, views, log }, projections, undefined, { maxDocuments: 4, pageSize: 7 });
    expect(spilled.peakDocuments).toBeGreaterThan(4);
    expect(await snapshot()).toEqual(before);
  });
});
