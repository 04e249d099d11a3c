/**
 * Fresh SQLite files opened by several processes at the same moment, as the two parts of
 * PROCESSES=2 open the event store and bus log of an empty DATA_DIR: every open succeeds.
 * (Switching a fresh file to WAL met SQLITE_BUSY at once, without the busy timeout, and the
 * part that lost the race died at start.)
 */
import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';
import { tempDir } from '../support/tmp.js';

const OPENERS = 4;
const FILES = 25;

async function runOpener(dir: string, startAt: number): Promise<{ failures: string[] }> {
  return JSON.parse(await runScript('test/support/sqlite-opener.ts', [dir, String(FILES), String(startAt)])) as { failures: string[] };
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
