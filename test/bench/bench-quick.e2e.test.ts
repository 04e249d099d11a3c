import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('benchmark harness', () => {
  it('`npm run bench -- --quick` runs every scenario (the peer without LiteLLM) and prints the results table', async () => {
    const { stdout } = await run(join('node_modules', '.bin', 'tsx'), ['bench/run.ts', '--quick'], { timeout: 240_000, maxBuffer: 10 * 2 ** 20 });
    for (const figure of ['baseline', 'poll', 'submit', 'life cycle', 'audit replay', 'projection rebuild', 'memory']) expect(stdout).toContain(figure);
    const poll = /\| poll [^|]+\| (\d+) req\/s/.exec(stdout);
    expect(Number(poll?.[1])).toBeGreaterThan(0);
    expect(stdout).toMatch(/life cycle \(300 tasks to completion\) \| \d+ tasks\/s/);
    // Both processes of the default (two cores here) do their part, each one's CPU time measured.
    expect(stdout).toMatch(/CPU per task: (?=[^|]*api [\d.]+ ms)(?=[^|]*engine [\d.]+ ms)/);
    expect(stdout).toMatch(/peak RSS \d+ MB \(idle \d+ MB\); by process: (?=[^|]*api \d+ MB)(?=[^|]*engine \d+ MB)/);
    // The peer scenario without LiteLLM (its install and start are for full runs): the stand-in and the gateway in front of it.
    expect(stdout).toContain('LiteLLM not measured: not run (--quick');
    expect(stdout).toMatch(/\| this gateway \| POST \/v1\/images\/generations \(b64_json\) \| [^|]+\| [^|]+\| [1-9]\d* req\/s/);
  }, 300_000);
});
