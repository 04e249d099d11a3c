/**
 * The deterministic simulation's slice in `npm test`: ≥ 50,000 task life cycles over seeded
 * worlds with every fault kind on, 0 invariant violations; a hot world (one account holding
 * thousands of reservations open) whose books still close; and a seed replayed gives the same
 * trace. The seeds are printed (SIM_SEED and SIM_HOT_SEED move the slice; a failing seed
 * replays with `npm run simulate -- --seed N --tasks 2000`, or `--tasks 5000 --hot`).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tsx = join('node_modules', '.bin', 'tsx');
const FIRST_SEED = Number(process.env.SIM_SEED ?? 1000);
// 27 seeds (about 50,500 life cycles): CI's time (30 until session 39; the holes put back on
// purpose are each found within the first three, docs/simulation.md).
const SEEDS = 27;
const TASKS = 2000;
const FIRST_HOT_SEED = Number(process.env.SIM_HOT_SEED ?? 500);
// One hot world: CI's time (it took two until session 38; each one catches the hole it is for).
const HOT_SEEDS = 1;
// 7,000 submits (about 6,800 open at most): with 5,000 (about 4,850 open) the hole it is for (no
// snapshot past 4,000 open) was no longer found; its jobs are polled every 30 s, so it costs less
// than 5,000 polled every 5 s did (60 against 77 s alone here).
const HOT_TASKS = 7000;

interface Summary {
  seeds: number;
  lifecycles: number;
  steps: number;
  invariantChecks: number;
  faults: Record<string, number>;
  windows: Record<string, number>;
  mostOpen: number;
  debits: number;
  syncCalls: { succeeded: number; failed: number; unanswered: number };
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
        `synchronous calls ${JSON.stringify(summary.syncCalls)}, faults ${JSON.stringify(summary.faults)}, windows ${JSON.stringify(summary.windows)}, ${summary.wallSeconds} s`,
    );
    expect(summary.violations).toEqual([]);
    expect(summary.seeds).toBe(SEEDS);
    expect(summary.lifecycles).toBeGreaterThanOrEqual(50_000);
    // Administrators' debits ran beside the submits, under the same faults.
    expect(summary.debits).toBeGreaterThan(100);
    // Synchronous calls ran beside them (a tenth of the requests): answered with their result,
    // with an error, and cut off by a killed front door.
    expect(summary.syncCalls.succeeded).toBeGreaterThan(1000);
    expect(summary.syncCalls.failed).toBeGreaterThan(0);
    expect(summary.syncCalls.unanswered).toBeGreaterThan(0);
    // Every kind of fault was injected somewhere in the slice.
    for (const kind of [
      'appendFailsBeforeCommit',
      'appendAmbiguous',
      'readFails',
      'crash',
      'pause',
      'pauseMidSubmit',
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

  it(`${HOT_SEEDS} hot world(s) from ${FIRST_HOT_SEED}, ${HOT_TASKS} submits on one account: thousands of reservations open, the books still close`, async () => {
    const summary = await simulate(
      ['--seed', String(FIRST_HOT_SEED), '--seeds', String(HOT_SEEDS), '--tasks', String(HOT_TASKS), '--hot', '--jobs', String(HOT_SEEDS)],
      900_000,
    );
    console.log(
      `simulation (hot): seeds ${FIRST_HOT_SEED}..${FIRST_HOT_SEED + HOT_SEEDS - 1}, ${summary.lifecycles} life cycles, at most ${summary.mostOpen} reservations open on one account, ${summary.wallSeconds} s`,
    );
    expect(summary.violations).toEqual([]);
    expect(summary.seeds).toBe(HOT_SEEDS);
    // Long enough past where the books once stopped closing (4,000 open) for 3,000 account
    // events to pass there: that hole, put back, is found in this world.
    expect(summary.mostOpen).toBeGreaterThan(6000);
  }, 960_000);

  it('a seed replays to the same trace', async () => {
    const summary = await simulate(['--seed', String(FIRST_SEED + 7), '--tasks', '300', '--replay'], 300_000);
    expect(summary.violations).toEqual([]);
  }, 320_000);
});
