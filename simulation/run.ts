/**
 * `npm run simulate -- --seed N --tasks M [--seeds S] [--instances K] [--jobs J] [--faults all|none] [--replay]`
 *
 * Runs S seeds from N (M task life cycles each, K engine processes) on virtual time and prints,
 * per seed and in all, the figures: steps, tasks, faults injected by kind, invariant checks,
 * the named windows that allowed a second upstream job. A violated invariant prints the seed,
 * the invariant, the trace of the task it concerns and the command that replays it, and the
 * run exits 1. `--jobs` runs seeds in that many child processes (one core each). `--replay`
 * runs every seed twice and fails when the two traces differ (determinism).
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { ALL_FAULTS, NO_FAULTS } from './faults.js';
import { seededRandom, type Random } from './random.js';
import { installVirtualTime } from './virtual-time.js';
import type { RunResult, WorldOptions } from './world.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    seeds: { type: 'string', default: '1' },
    tasks: { type: 'string', default: '1000' },
    instances: { type: 'string', default: '2' },
    jobs: { type: 'string', default: '1' },
    faults: { type: 'string', default: 'all' },
    replay: { type: 'boolean', default: false },
    hot: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
    stride: { type: 'string', default: '1' },
  },
});
const firstSeed = Number(values.seed);
const seedCount = Number(values.seeds);
const jobs = Math.max(1, Math.min(Number(values.jobs), seedCount));
const worldOptions = (seed: number): WorldOptions => ({
  seed,
  tasks: Number(values.tasks),
  engines: Number(values.instances),
  rates: values.faults === 'none' ? NO_FAULTS : ALL_FAULTS,
  submitPerSecond: 30,
  maxAgeSeconds: 600,
  partitions: 8,
  hot: values.hot,
  keepTrace: true,
});

async function runSeeds(seeds: readonly number[], report: (r: RunResult) => void): Promise<void> {
  let random: Random = seededRandom(0);
  const time = installVirtualTime(() => random);
  // Imported after the fakes are in: no engine module holds a real timer function.
  const { runWorld } = await import('./world.js');
  for (const seed of seeds) {
    random = seededRandom(seed);
    const result = await runWorld(time, random, worldOptions(seed));
    if (values.replay && !result.violation) {
      random = seededRandom(seed);
      const again = await runWorld(time, random, worldOptions(seed));
      if (again.traceHash !== result.traceHash) {
        result.violation = {
          invariant: 'a seed replays to the same trace',
          detail: `trace ${result.traceHash}, replayed ${again.traceHash}`,
          subject: '',
          trace: [],
        };
      }
    }
    report(result);
    if (result.violation) return;
  }
}

interface Totals {
  seeds: number;
  tasks: number;
  lifecycles: number;
  acknowledged: number;
  succeeded: number;
  failed: number;
  steps: number;
  eventsChecked: number;
  invariantChecks: number;
  callbacksDelivered: number;
  extraSubmitCalls: number;
  mostOpen: number;
  debits: number;
  syncCalls: RunResult['syncCalls'];
  faults: Record<string, number>;
  windows: Record<string, number>;
  violations: RunResult[];
}

function add(t: Totals, r: RunResult): void {
  t.seeds++;
  t.tasks += r.tasks;
  t.lifecycles += r.lifecycles;
  t.acknowledged += r.acknowledged;
  t.succeeded += r.succeeded;
  t.failed += r.failed;
  t.steps += r.steps;
  t.eventsChecked += r.eventsChecked;
  t.invariantChecks += r.invariantChecks;
  t.callbacksDelivered += r.callbacksDelivered;
  t.extraSubmitCalls += r.extraSubmitCalls;
  t.mostOpen = Math.max(t.mostOpen, r.mostOpen);
  t.debits += r.debits;
  for (const k of ['succeeded', 'failed', 'unanswered'] as const) t.syncCalls[k] += r.syncCalls[k];
  for (const [k, n] of Object.entries(r.faults)) t.faults[k] = (t.faults[k] ?? 0) + n;
  for (const [k, n] of Object.entries(r.windows)) t.windows[k] = (t.windows[k] ?? 0) + n;
  if (r.violation) t.violations.push(r);
}

function printViolation(r: RunResult): void {
  const v = r.violation!;
  console.log(`\nVIOLATION seed ${r.seed}: ${v.invariant}: ${v.detail}`);
  console.log(
    `  subject: ${v.subject || '(none)'}; replay: npm run simulate -- --seed ${r.seed} --tasks ${r.tasks} --instances ${values.instances}${values.hot ? ' --hot' : ''}`,
  );
  const shown = v.trace.slice(-80);
  if (shown.length) console.log(`  trace (${shown.length} of ${v.trace.length} lines):\n    ${shown.join('\n    ')}`);
}

async function main(): Promise<void> {
  const stride = Number(values.stride);
  const seeds = Array.from({ length: seedCount }, (_, i) => firstSeed + i * stride);
  if (values.child) {
    await runSeeds(seeds, (r) => process.send!(r));
    return;
  }
  const started = performance.now();
  const totals: Totals = {
    seeds: 0,
    tasks: 0,
    lifecycles: 0,
    acknowledged: 0,
    succeeded: 0,
    failed: 0,
    steps: 0,
    eventsChecked: 0,
    invariantChecks: 0,
    callbacksDelivered: 0,
    extraSubmitCalls: 0,
    mostOpen: 0,
    debits: 0,
    syncCalls: { succeeded: 0, failed: 0, unanswered: 0 },
    faults: {},
    windows: {},
    violations: [],
  };
  const onResult = (r: RunResult) => {
    add(totals, r);
    if (!values.json) {
      console.log(
        `seed ${r.seed}: ${r.lifecycles} task life cycles of ${r.tasks} submits (${r.acknowledged} acknowledged: ${r.succeeded} succeeded, ${r.failed} failed; synchronous calls ${r.syncCalls.succeeded} answered succeeded, ${r.syncCalls.failed} an error, ${r.syncCalls.unanswered} cut off), ${r.steps} steps, ${r.virtualSeconds} virtual s, ${Object.values(r.faults).reduce((a, b) => a + b, 0)} faults, ${r.invariantChecks} checks, trace ${r.traceHash}${r.violation ? ' VIOLATION' : ''}`,
      );
    }
    if (r.violation) printViolation(r);
  };
  if (jobs === 1) await runSeeds(seeds, onResult);
  else {
    // Seeds dealt round robin to `jobs` child processes, each with its own virtual clock.
    await Promise.all(
      Array.from({ length: jobs }, (_, j) => {
        const mine = seeds.filter((_, i) => i % jobs === j);
        return new Promise<void>((resolve, reject) => {
          const child = fork(process.argv[1]!, [...childArgs(mine)], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
          child.on('message', (r: RunResult) => onResult(r));
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`simulation child exited ${code}`))));
        });
      }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const summary = {
    ...totals,
    violations: totals.violations.map((r) => ({ seed: r.seed, ...r.violation, trace: undefined })),
    wallSeconds: Math.round(seconds),
  };
  if (values.json) console.log(JSON.stringify(summary));
  else {
    console.log(
      `\n${totals.seeds} seeds (${seeds[0]}..${seeds[seeds.length - 1]}), ${totals.lifecycles} task life cycles of ${totals.tasks} submits (${totals.acknowledged} acknowledged, ${totals.succeeded} succeeded, ${totals.failed} failed), ${totals.steps} steps, ${totals.eventsChecked} events checked, ${totals.invariantChecks} invariant checks, ${totals.callbacksDelivered} callbacks delivered, at most ${totals.mostOpen} reservations open on one account, ${totals.debits} administrators' debits, synchronous calls ${JSON.stringify(totals.syncCalls)}, in ${seconds.toFixed(0)} s`,
    );
    console.log(
      `faults injected: ${
        Object.entries(totals.faults)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none'
      }`,
    );
    console.log(
      `named windows (a second upstream job allowed): ${
        Object.entries(totals.windows)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none'
      }; extra submit calls ${totals.extraSubmitCalls}`,
    );
    console.log(`invariant violations: ${totals.violations.length}`);
  }
  process.exitCode = totals.violations.length > 0 ? 1 : 0;
}

/** A child's seeds are dealt round robin: an arithmetic progression from its first, step `jobs`. */
function childArgs(seeds: readonly number[]): string[] {
  return ['--child', '--seed', String(seeds[0]), '--seeds', String(seeds.length), '--stride', String(jobs), ...passThrough()];
}

function passThrough(): string[] {
  return [
    '--tasks',
    String(values.tasks),
    '--instances',
    String(values.instances),
    '--faults',
    String(values.faults),
    ...(values.replay ? ['--replay'] : []),
    ...(values.hot ? ['--hot'] : []),
  ];
}

await main();
