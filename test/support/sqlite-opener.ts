/**
 * An opener process for the test of fresh SQLite files opened by several processes at once:
 * `tsx sqlite-opener.ts <dir> <files> <startAtMs>`. From startAtMs it opens `<dir>/<i>.sqlite`
 * at startAtMs + i × 40 ms (each opener on the same beat, so the opens meet) and closes it.
 * Prints how many opens failed, and why.
 */
import { join } from 'node:path';
import { openSqlite } from '../../src/adapters/sqlite/database.js';

const [dir, files, startAt] = process.argv.slice(2);
if (!dir || !files || !startAt) throw new Error('usage: sqlite-opener.ts <dir> <files> <startAtMs>');
const pause = new Int32Array(new SharedArrayBuffer(4));
const failures: string[] = [];
for (let i = 0; i < Number(files); i++) {
  // A busy wait on the beat: a timer's late wake-up would spread the opens apart.
  const beat = Number(startAt) + i * 40;
  while (Date.now() < beat - 2) Atomics.wait(pause, 0, 0, 1);
  while (Date.now() < beat);
  try {
    openSqlite(join(dir, `${i}.sqlite`)).close();
  } catch (error) {
    failures.push((error as Error).message);
  }
}
process.stdout.write(`${JSON.stringify({ failures })}\n`);
