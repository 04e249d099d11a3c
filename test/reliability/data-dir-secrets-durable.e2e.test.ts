/**
 * The secrets a first start generates into DATA_DIR (the channel keys secret, the URL-signing
 * key) are durable before the gateway uses them: channel keys are encrypted with one and result
 * URLs signed with the other, so a secret lost to a power loss after its first use would leave
 * those unreadable. A power loss cannot be staged here, so the test watches the system calls of
 * a first start, as `npm start` runs it (two processes racing for the files), under strace (in
 * the machine's image; without it one line says so and the file skips): each file's content is
 * fsynced before it is linked into place, and DATA_DIR is fsynced after the link.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_SECRET_FILE } from '../../src/engine/channels/channel-key-secret.js';
import { freePort, startNodeServer } from '../support/child-gateway.js';
import { ADMIN_PASSWORD } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';

const strace = spawnSync('strace', ['-V']).status === 0;
if (!strace) console.log('data directory secrets durability: skipped, no strace on this machine (the system calls cannot be watched)');

describe('secrets generated into DATA_DIR on a first start', () => {
  it.skipIf(!strace)(
    'are fsynced before they are linked into place, and the data directory after',
    async () => {
      const dir = tempDir('secrets-durable-');
      try {
        const root = realpathSync(dir.path);
        const dataDir = join(root, 'data');
        const port = await freePort();
        const { child } = await startNodeServer({
          script: 'src/main.ts',
          name: 'gateway under strace',
          wrapper: ['strace', '-y', '-e', 'trace=fsync,fdatasync,link,linkat', '-ff', '-o', join(root, 'strace')],
          env: { HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD, LOG_LEVEL: 'warn', SIMULATOR: '1' },
          port,
          readyPath: '/readyz',
          startTimeoutMs: 120_000,
        });
        // strace's own child is the gateway's supervisor: stopped, it stops its processes and strace ends with them.
        const gateway = Number(
          execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
            .trim()
            .split('\n')[0],
        );
        process.kill(gateway, 'SIGTERM');
        await once(child, 'exit');

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
      } finally {
        dir.remove();
      }
    },
    180_000,
  );
});
