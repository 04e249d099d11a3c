/**
 * `npm start`'s compile step (scripts/gateway-build.ts) on a copy of the checkout: it builds a
 * stale dist/, does nothing on a fresh one, builds again after a source changes, and a lock left
 * by a build that was killed (Ctrl-C in the first start) does not make the next start wait.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ensureGatewayBuilt } from '../../scripts/gateway-build.js';
import { tempDir } from '../support/tmp.js';

const root = process.cwd();
const copy = tempDir('gateway-build-');
for (const entry of ['src', 'projections', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) {
  cpSync(join(root, entry), join(copy.path, entry), { recursive: true });
}
symlinkSync(join(root, 'node_modules'), join(copy.path, 'node_modules'));
afterAll(() => copy.remove());

/** A pid that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

it('builds past a lock its dead holder left, then only when a source changed', async () => {
  mkdirSync(join(copy.path, 'dist', '.building'), { recursive: true });
  writeFileSync(join(copy.path, 'dist', '.building', 'pid'), String(deadPid()));

  const startedAt = Date.now();
  expect(await ensureGatewayBuilt(copy.path)).toBe(true);
  // Well under the 30 s a lock without a pid is honoured, and nothing like a wait for a build.
  expect(Date.now() - startedAt).toBeLessThan(90_000);
  expect(existsSync(join(copy.path, 'dist', 'src', 'main.js'))).toBe(true);
  expect(existsSync(join(copy.path, 'dist', '.building'))).toBe(false);

  expect(await ensureGatewayBuilt(copy.path)).toBe(false);

  // A source saved after the build: built again.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const savedAt = new Date();
  utimesSync(join(copy.path, 'src', 'config.ts'), savedAt, savedAt);
  expect(await ensureGatewayBuilt(copy.path)).toBe(true);
  expect(await ensureGatewayBuilt(copy.path)).toBe(false);
}, 180_000);
