/**
 * The audit and the rebuild open the stores the gateway opens: here the views live in MongoDB
 * (MONGO_URL; FerretDB in CI, see .ci/run) and the events in SQLite. A gateway runs a small
 * workload on them, then `npm run projections:rebuild` and `npm run audit` run as the
 * operator runs them, with the same environment: the rebuilt views deep-equal the live ones and
 * the audit finds no discrepancy.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyProjections } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { embeddedEnv } from '../support/child-gateway.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

const run = promisify(execFile);
const mongoUrl = process.env.MONGO_URL?.trim();
if (!mongoUrl) {
  if (process.env.MONGO_STANDIN) throw new Error('MONGO_STANDIN is set but MONGO_URL is not: the tools cannot be tried against MongoDB');
  console.warn('[audit] tools-against-MongoDB suite skipped: MONGO_URL not set');
}

/** MONGO_URL with a database of this run's own (the path of a MongoDB connection string). */
function withDatabase(url: string, db: string): string {
  const [base, query] = url.split('?') as [string, string | undefined];
  const host = base.replace(/^(mongodb(?:\+srv)?:\/\/[^/]*).*$/, '$1');
  return `${host}/${db}${query ? `?${query}` : ''}`;
}

describe.skipIf(!mongoUrl)('audit and rebuild with the views in MongoDB', () => {
  let gw: TestGateway;
  let env: NodeJS.ProcessEnv;
  const projections = [...coreProjections, ...familyProjections];

  beforeAll(async () => {
    const MONGO_URL = withDatabase(mongoUrl!, `audit_${randomUUID().slice(0, 8)}`);
    gw = await startGateway({ ...FAST_ENGINE, MONGO_URL }, { keepData: true });
    env = { ...embeddedEnv(), DATA_DIR: gw.dataDir, MONGO_URL };
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const ids: string[] = [];
    for (const prompt of ['ok', 'bad [sim:fail]', 'fewer [sim:partial]']) {
      ids.push((await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 3 })).body.id as string);
    }
    for (const id of ids) await waitForImageTask(api, id, 60_000);
    const head = await gw.gateway.deps.events.headPosition();
    await gw.gateway.engine.settler.caughtUp(head);
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
  }, 180_000);
  afterAll(async () => {
    await gw?.close();
    const { rmSync } = await import('node:fs');
    if (gw) rmSync(gw.dataDir, { recursive: true, force: true });
  });

  it('`npm run projections:rebuild` rebuilds the MongoDB views deep-equal to what the live projections wrote; `npm run audit` then finds nothing', async () => {
    const { views } = gw.gateway.deps;
    const snapshot = async () => {
      const all: Record<string, unknown> = {};
      for (const p of projections)
        all[p.view] = (await views.find(p.view, {}, { limit: 1_000_000 })).map((d) => ({ id: d.id, doc: d.doc })).sort((a, b) => a.id.localeCompare(b.id));
      return all;
    };
    // The tools run with the gateway stopped, as their usage says.
    await gw.gateway.engine.stop();
    await gw.gateway.deps.runner.stop();
    const before = await snapshot();
    expect((before.accounts as unknown[]).length).toBeGreaterThan(0);

    const rebuilt = await run('node', ['--import', 'tsx', 'scripts/rebuild-projections.ts'], { env, timeout: 120_000 });
    expect(rebuilt.stderr.split('\n')[0]).toMatch(/^events: SQLite .*events\.sqlite; views: MongoDB database audit_\w+ at mongodb:\/\//);
    expect(rebuilt.stdout).toMatch(/^rebuilt .*\baccounts\b.* from \d+ events/);
    expect(await snapshot()).toEqual(before);

    const audited = await run('node', ['--import', 'tsx', 'scripts/audit.ts'], { env, timeout: 120_000 });
    expect(audited.stderr.split('\n')[0]).toMatch(/views: MongoDB database audit_/);
    expect(audited.stdout).toMatch(/^audited [1-9]\d* accounts, \d+ events\naudited [1-9]\d* users\nno discrepancies\n$/);
  }, 240_000);
});
