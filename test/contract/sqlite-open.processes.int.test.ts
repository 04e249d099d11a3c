/**
 * Fresh SQLite files opened by several processes at the same moment, as the two parts of
 * PROCESSES=2 open the event store and bus log of an empty DATA_DIR: every open succeeds.
 * (Switching a fresh file to WAL met SQLITE_BUSY at once, without the busy timeout, and the
 * part that lost the race died at start.)
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';

const OPENERS = 4;
const FILES = 25;

function runOpener(dir: string, startAt: number): Promise<{ failures: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sqlite-opener.ts', dir, String(FILES), String(startAt)], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { failures: string[] }) : reject(new Error(`opener exited with ${code}: ${err}`))));
  });
}

describe('fresh SQLite files opened by several processes at once', () => {
  it(`${OPENERS} processes open each of ${FILES} fresh files together: every open succeeds`, async () => {
    const dir = tempDir('sqlite-open-');
    try {
      // Late enough that every opener has loaded before the first beat.
      const startAt = Date.now() + 4_000;
      const results = await Promise.all(Array.from({ length: OPENERS }, () => runOpener(dir.path, startAt)));
      expect(results.flatMap((r) => r.failures)).toEqual([]);
    } finally {
      dir.remove();
    }
  }, 60_000);
});
