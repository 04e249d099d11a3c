/**
 * One summary line for the whole reliability suite. Each suite records its figures (seed,
 * requests, status counts, kill cycles, invariants checked); the global teardown prints them
 * as one line after every test file has run, so CI's log shows the run at a glance.
 */
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReliabilityFigures {
  suite: string;
  seed?: number;
  requests?: number;
  statuses?: Record<string, number>;
  killCycles?: number;
  invariants?: number;
}

const ENV = 'RELIABILITY_SUMMARY_FILE';

/** Called by a suite when it has its figures (a no-op outside `vitest run` with the global setup). */
export function recordReliability(figures: ReliabilityFigures): void {
  const file = process.env[ENV];
  if (file) appendFileSync(file, `${JSON.stringify(figures)}\n`);
}

/** Global setup: where the suites write; the returned teardown prints the line. */
export default function setup(): () => void {
  const file = join(tmpdir(), `reliability-${process.pid}-${Date.now()}.jsonl`);
  process.env[ENV] = file;
  return () => {
    if (!existsSync(file)) return;
    const all = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ReliabilityFigures);
    rmSync(file, { force: true });
    const statuses: Record<string, number> = {};
    for (const f of all) for (const [k, v] of Object.entries(f.statuses ?? {})) statuses[k] = (statuses[k] ?? 0) + v;
    const sum = (key: 'requests' | 'killCycles' | 'invariants') => all.reduce((n, f) => n + (f[key] ?? 0), 0);
    const seeds = all
      .filter((f) => f.seed !== undefined)
      .map((f) => `${f.suite}=${f.seed}`)
      .join(',');
    console.log(
      `[reliability] suites=${all.map((f) => f.suite).join(',')} seeds=${seeds} kill-cycles=${sum('killCycles')} requests=${sum('requests')} statuses=${JSON.stringify(statuses)} invariants=${sum('invariants')}`,
    );
  };
}
