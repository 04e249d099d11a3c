/**
 * A put into the local asset store is durable when it returns: the file's bytes and its name.
 * A rename (and a directory the put made) is an entry in the parent directory, and only an fsync
 * of that directory commits it on every file system. A power loss cannot be staged here, so the
 * test watches the system calls of a process doing puts (strace, in the machine's image): after
 * each rename, an fsync of the directory that holds the new name and of the parent of each
 * directory the put created; for concurrent puts that share an fsync of a directory, one that
 * began after their rename.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';

const strace = spawnSync('strace', ['-V']).status === 0;
if (!strace) console.log('asset store durability: skipped, no strace on this machine (the system calls cannot be watched)');

describe('local directory asset store: durable names', () => {
  it.skipIf(!strace)(
    'fsyncs, after each rename, the directory of the new name and the parent of every directory the put created',
    () => {
      const dir = tempDir('assets-durable-');
      try {
        const root = realpathSync(dir.path);
        const log = join(root, 'strace.log');
        execFileSync(
          'strace',
          [
            '-f',
            '-y',
            '-e',
            'trace=fsync,fdatasync,rename,renameat,renameat2',
            '-o',
            log,
            process.execPath,
            '--import',
            'tsx',
            'test/support/asset-puts.ts',
            join(root, 'assets'),
          ],
          { stdio: 'pipe', timeout: 60_000 },
        );
        const objects = join(root, 'assets', 'objects');
        const lines = readFileSync(log, 'utf8').split('\n');
        const renameOf = (key: string) => lines.findIndex((l) => /\brename\w*\(/.test(l) && l.includes(`${join(objects, key)}"`) && !/= -1/.test(l));
        const syncedAfter = (from: number, until: number) =>
          lines
            .slice(from + 1, until === -1 ? undefined : until)
            // Concurrent calls print as `fsync(7</path> <unfinished ...>` and a `resumed` line later.
            .flatMap((l) => /\bf(data)?sync\(\d+<([^>]+)>/.exec(l)?.[2] ?? []);

        const first = renameOf('tasks/t1/0.png');
        const second = renameOf('tasks/t1/1.png');
        const third = renameOf('tasks/t2/0.png');
        expect(
          [first, second, third].every((i) => i >= 0),
          'each put renamed its file into place',
        ).toBe(true);
        expect(first < second && second < third).toBe(true);
        // First put: tasks/ and tasks/t1/ were made, so objects/ and tasks/ hold new entries too.
        expect(syncedAfter(first, second)).toEqual(expect.arrayContaining([join(objects, 'tasks', 't1'), join(objects, 'tasks'), objects]));
        // Second: into the existing tasks/t1/.
        expect(syncedAfter(second, third)).toEqual(expect.arrayContaining([join(objects, 'tasks', 't1')]));
        // Third: tasks/t2/ was made inside tasks/.
        const concurrent = Array.from({ length: 8 }, (_, i) => renameOf(`tasks/c${i}/0.png`));
        expect(
          concurrent.every((i) => i > third),
          'each concurrent put renamed its file into place, after the third',
        ).toBe(true);
        expect(syncedAfter(third, Math.min(...concurrent))).toEqual(expect.arrayContaining([join(objects, 'tasks', 't2'), join(objects, 'tasks')]));
        // Concurrent puts into new directories of tasks/: each one's directory, and tasks/ (shared
        // between them, sharedDirectorySyncs), fsynced after its own rename.
        for (const [i, rename] of concurrent.entries()) {
          expect(syncedAfter(rename, -1), `concurrent put ${i}`).toEqual(expect.arrayContaining([join(objects, 'tasks', `c${i}`), join(objects, 'tasks')]));
        }
      } finally {
        dir.remove();
      }
    },
    90_000,
  );
});
