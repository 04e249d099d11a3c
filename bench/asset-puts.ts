/**
 * `npx tsx bench/asset-puts.ts [CONCURRENCY] [COUNT]`: COUNT puts of 60 kB, CONCURRENCY at a
 * time, each into a new task directory (as re-hosting does), into a local asset store below
 * `.tmp/` (the file system of a default data directory). Prints ms per put, puts per second and
 * the process's CPU (user and system, all threads) per put.
 * What decision 0159 measured (run in two checkouts in turn); not a figure of `npm run bench`.
 */
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createFsAssetStore } from '../src/adapters/fs/asset-store.js';

const concurrency = Number(process.argv[2] ?? 1);
const count = Number(process.argv[3] ?? 1000);
mkdirSync('.tmp', { recursive: true });
const dir = mkdtempSync(join('.tmp', 'asset-puts-'));
try {
  const store = createFsAssetStore({ dir });
  const bytes = Buffer.alloc(60_000, 7);
  let next = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await store.put(`tasks/t${next++}/0.png`, bytes, 'image/png');
    }),
  );
  const ms = performance.now() - started;
  // CPU of every thread of the process: the loop's and the thread pool's system calls.
  const { user, system } = process.cpuUsage(cpu);
  const perPut = (micros: number) => (micros / 1000 / count).toFixed(3);
  console.log(
    `concurrency ${concurrency}: ${(ms / count).toFixed(3)} ms a put, ${Math.round((count / ms) * 1000)} puts/s, CPU ${perPut(user)} ms user + ${perPut(system)} ms system a put`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
