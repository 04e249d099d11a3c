/**
 * The README's "First steps" and "First tasks" commands, run verbatim with bash against a
 * gateway started as `npm start` starts it (only the port in `B=` differs): a new user's path
 * keeps working as the product changes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { startChildGateway, type ChildGateway } from '../support/child-gateway.js';
import { tempDir } from '../support/tmp.js';

const run = promisify(execFile);
const data = tempDir();
// Inside the repository, so `import 'openai'` in the README's script resolves.
const work = join(process.cwd(), '.tmp', `readme-${process.pid}`);
let gateway: ChildGateway | undefined;
afterAll(async () => {
  await gateway?.kill('SIGTERM');
  data.remove();
  rmSync(work, { recursive: true, force: true });
});

/** The `sh` blocks of a README section, in order. */
function shBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}`);
  expect(start, `README section ${heading}`).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('README first steps and first tasks', () => {
  it('run verbatim on a fresh gateway', async () => {
    const readme = readFileSync('README.md', 'utf8');
    const steps = shBlocks(readme, 'First steps');
    const tasks = shBlocks(readme, 'First tasks');
    // The first block of First steps starts the gateway: that is done here, the same way.
    expect(steps[0]).toMatch(/ADMIN_PASSWORD=(\S+) npm start/);
    const password = /ADMIN_PASSWORD=(\S+) npm start/.exec(steps[0]!)![1]!;
    gateway = await startChildGateway(data.path, { ADMIN_PASSWORD: password, LOG_LEVEL: 'warn', SIM_STEP_MS: '50' });
    const port = new URL(gateway.url).port;
    const script = [...steps.slice(1), ...tasks].join('\n').replace('B=http://127.0.0.1:3000', `B=http://127.0.0.1:${port}`);
    mkdirSync(work, { recursive: true });
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('"success":true');
    expect(stdout).toMatch(/ completed\n/);
    expect(stdout).toMatch(/boat\.mp4: 5 s at 768P/);
    expect(stdout).toContain('"choices"');
    // A real image of the size asked for (a solid colour: a few hundred bytes, whatever its size).
    const fox = PNG.sync.read(readFileSync(join(work, 'fox.png')));
    expect([fox.width, fox.height]).toEqual([832, 1216]);
    // An MP4 container: its first box is `ftyp`.
    expect(readFileSync(join(work, 'boat.mp4')).toString('latin1', 4, 8)).toBe('ftyp');
  }, 180_000);
});
