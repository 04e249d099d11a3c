/**
 * What a first start makes in an empty DATA_DIR is durable before the gateway relies on it. The
 * secrets it generates (the channel keys secret, the URL-signing key): channel keys are
 * encrypted with one and result URLs signed with the other, so a secret lost to a power loss
 * after its first use would leave those unreadable. The directories it makes (DATA_DIR itself,
 * the asset store's): a directory is an entry in its parent, and one never committed takes every
 * file in it along. A power loss cannot be staged here, so the test watches the system calls of
 * a first start, as `npm start` runs it (two processes racing for the files), under strace (in
 * the machine's image; without it one line says so and the file skips): each secret's content
 * is fsynced before it is linked into place and DATA_DIR after the link; each directory's parent
 * is fsynced after the directory is made.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_SECRET_FILE } from '../../src/engine/channels/channel-key-secret.js';
import { freePort, GATEWAY_SCRIPT, startNodeServer } from '../support/child-gateway.js';
import { ADMIN_PASSWORD } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';

const strace = spawnSync('strace', ['-V']).status === 0;
if (!strace) console.log('data directory durability: skipped, no strace on this machine (the system calls cannot be watched)');

describe('what a first start makes in an empty DATA_DIR', () => {
  it.skipIf(!strace)(
    'secrets are fsynced before they are linked into place, DATA_DIR after; each new directory is fsynced in its parent',
    async () => {
      const dir = tempDir('data-dir-durable-');
      try {
        const root = realpathSync(dir.path);
        // Two directories to make above DATA_DIR's own files: each one's parent must be fsynced.
        const dataDir = join(root, 'data', 'gateway');
        const port = await freePort();
        const { child } = await startNodeServer({
          script: GATEWAY_SCRIPT,
          name: 'gateway under strace',
          wrapper: ['strace', '-y', '-e', 'trace=fsync,fdatasync,link,linkat,mkdir,mkdirat', '-ff', '-o', join(root, 'strace')],
          env: { HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD, LOG_LEVEL: 'warn', SIMULATOR: '1' },
          port,
          readyPath: '/readyz',
          startTimeoutMs: 120_000,
        });
        try {
          // strace's own child is the gateway's supervisor: stopped, it stops its processes and strace ends with them.
          // (Never 0 or a negative pid: those would signal this test's own process group.)
          const gateway = Number(
            execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
              .trim()
              .split('\n')[0],
          );
          if (!Number.isInteger(gateway) || gateway <= 1) throw new Error(`no gateway process under strace (pid ${child.pid})`);
          process.kill(gateway, 'SIGTERM');
          await once(child, 'exit');
        } finally {
          // Whatever is left of strace's process group (nothing, after a clean stop).
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            /* the group is gone */
          }
        }

        // -ff writes each process's (each thread's) calls to a file of its own (`strace.<tid>`), so
        // no call is split by another's; the secrets are made by a process's main thread.
        const traces = readdirSync(root)
          .filter((f) => f.startsWith('strace.'))
          .map((f) => readFileSync(join(root, f), 'utf8').split('\n'));
        const synced = (line: string) => /^f(data)?sync\(\d+<([^>]+)>/.exec(line)?.[2];

        for (const name of [GENERATED_SECRET_FILE, 'asset-signing.key']) {
          const target = join(dataDir, name);
          const madeBy = (lines: string[]) => lines.findIndex((l) => /^link(at)?\(/.test(l) && l.includes(`"${target}"`) && / = 0$/.test(l));
          const lines = traces.find((t) => madeBy(t) >= 0);
          expect(lines, `${name} was linked into place`).toBeDefined();
          const made = madeBy(lines!);
          const temp = /"([^"]+\.tmp)"/.exec(lines![made]!)![1]!;
          expect(lines!.slice(0, made).map(synced), `${name}'s content fsynced before its link`).toContain(temp);
          expect(lines!.slice(made + 1).map(synced), `DATA_DIR fsynced after ${name}'s link`).toContain(dataDir);
        }

        const assets = join(dataDir, 'assets');
        for (const made of [join(root, 'data'), dataDir, assets, join(assets, 'objects'), join(assets, 'tmp')]) {
          const madeBy = (lines: string[]) => lines.findIndex((l) => /^mkdir(at)?\(/.test(l) && l.includes(`"${made}"`) && / = 0$/.test(l));
          const lines = traces.find((t) => madeBy(t) >= 0);
          expect(lines, `${made} was made`).toBeDefined();
          expect(lines!.slice(madeBy(lines!) + 1).map(synced), `${made}'s parent fsynced after it was made`).toContain(dirname(made));
        }
      } finally {
        dir.remove();
      }
    },
    180_000,
  );
});
