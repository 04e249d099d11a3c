/**
 * The deterministic simulation's slice in `npm test`: ≥ 50,000 task life cycles over seeded
 * worlds with every fault kind on, 0 invariant violations; and a seed replayed gives the same
 * trace. The seeds are printed (SIM_SEED moves the slice; a failing seed replays with
 * `npm run simulate -- --seed N --tasks 2000`).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tsx = join('node_modules', '.bin', 'tsx');
const FIRST_SEED = Number(process.env.SIM_SEED ?? 1000);
const SEEDS = 30;
const TASKS = 2000;

interface Summary {
  seeds: number;
  lifecycles: number;
  steps: number;
  invariantChecks: number;
  faults: Record<string, number>;
  windows: Record<string, number>;
  violations: { seed: number; invariant: string; detail: string; subject: string }[];
  wallSeconds: number;
}

async function simulate(args: string[], timeout: number): Promise<Summary> {
  const { stdout } = await run(tsx, ['simulation/run.ts', '--json', ...args], { timeout, maxBuffer: 64 * 2 ** 20 }).catch((err: { stdout?: string }) => ({
    stdout: err.stdout ?? '',
  }));
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Summary;
}

describe('deterministic simulation', () => {
  it(`${SEEDS} seeds from ${FIRST_SEED}, ${TASKS} submits each, every fault kind: no invariant violated`, async () => {
    const summary = await simulate(['--seed', String(FIRST_SEED), '--seeds', String(SEEDS), '--tasks', String(TASKS), '--jobs', '2'], 1_500_000);
    console.log(
      `simulation: seeds ${FIRST_SEED}..${FIRST_SEED + SEEDS - 1}, ${summary.lifecycles} life cycles, ${summary.steps} steps, ${summary.invariantChecks} invariant checks, ` +
        `faults ${JSON.stringify(summary.faults)}, windows ${JSON.stringify(summary.windows)}, ${summary.wallSeconds} s`,
    );
    expect(summary.violations).toEqual([]);
    expect(summary.seeds).toBe(SEEDS);
    expect(summary.lifecycles).toBeGreaterThanOrEqual(50_000);
    // Every kind of fault was injected somewhere in the slice.
    for (const kind of [
      'appendFailsBeforeCommit',
      'appendAmbiguous',
      'readFails',
      'crash',
      'pause',
      'rebalance',
      'projectorStall',
      'busDuplicate',
      'busReorder',
      'upstreamAcceptThenTimeout',
      'upstreamSubmitFails',
      'upstreamPollFails',
      'upstreamLosesTask',
      'upstreamTaskFails',
      'upstreamOverDelivers',
      'upstreamResultsVanish',
      'upstreamAnswersLate',
      'upstreamNeverFinishes',
      'receiverFails',
    ]) {
      expect(summary.faults[kind], kind).toBeGreaterThan(0);
    }
  }, 1_600_000);

  it('a seed replays to the same trace', async () => {
    const summary = await simulate(['--seed', String(FIRST_SEED + 7), '--tasks', '300', '--replay'], 300_000);
    expect(summary.violations).toEqual([]);
  }, 320_000);
});
