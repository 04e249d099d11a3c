/**
 * The audit and the rebuild open the stores the gateway opens. A gateway runs a small workload
 * on the stores a test gives it, then `npm run projections:rebuild` and `npm run audit` run as
 * the operator runs them, with the same environment: the rebuilt views deep-equal the live ones
 * and the audit finds no discrepancy.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyProjections } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { embeddedEnv } from '../support/child-gateway.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

const run = promisify(execFile);

export interface AuditedStores {
  /** What the gateway's and the tools' environment adds to choose the stores. */
  env: Record<string, string>;
  /** The first line the tools print on stderr: which stores they opened. */
  storesLine: RegExp;
  cleanup(): Promise<void>;
}

export function auditToolsScenario(name: string, stores: () => Promise<AuditedStores>): void {
  describe(`audit and rebuild with ${name}`, () => {
    let gw: TestGateway;
    let env: NodeJS.ProcessEnv;
    let opened: AuditedStores | undefined;
    const projections = [...coreProjections, ...familyProjections];

    beforeAll(async () => {
      opened = await stores();
      gw = await startGateway({ ...FAST_ENGINE, ...opened.env }, { keepData: true });
      env = { ...embeddedEnv(), DATA_DIR: gw.dataDir, ...opened.env };
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
      await opened?.cleanup();
    });

    it('`npm run projections:rebuild` rebuilds the views deep-equal to what the live projections wrote; `npm run audit` then finds nothing', async () => {
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
      expect(rebuilt.stderr.split('\n')[0]).toMatch(opened!.storesLine);
      expect(rebuilt.stdout).toMatch(/^rebuilt .*\baccounts\b.* from \d+ events/);
      expect(await snapshot()).toEqual(before);

      const audited = await run('node', ['--import', 'tsx', 'scripts/audit.ts'], { env, timeout: 120_000 });
      expect(audited.stderr.split('\n')[0]).toMatch(opened!.storesLine);
      expect(audited.stdout).toMatch(/^audited [1-9]\d* accounts, \d+ events\naudited [1-9]\d* users\nno discrepancies\n$/);
    }, 240_000);
  });
}
