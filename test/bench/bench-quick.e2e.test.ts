import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('benchmark harness', () => {
  it('`npm run bench -- --quick` runs every scenario and prints the results table', async () => {
    const { stdout } = await run(join('node_modules', '.bin', 'tsx'), ['bench/run.ts', '--quick'], { timeout: 240_000, maxBuffer: 10 * 2 ** 20 });
    for (const figure of ['baseline', 'poll', 'submit', 'life cycle', 'audit replay', 'projection rebuild', 'memory']) expect(stdout).toContain(figure);
    const poll = /\| poll [^|]+\| (\d+) req\/s/.exec(stdout);
    expect(Number(poll?.[1])).toBeGreaterThan(0);
    expect(stdout).toMatch(/life cycle \(300 tasks to completion\) \| \d+ tasks\/s/);
  }, 300_000);
});
