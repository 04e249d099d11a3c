/** The benchmark's results: each figure beside its baseline and its target. */
import { cpus, totalmem } from 'node:os';
import type { SimulatorMode } from './gateway.js';
import type { LoadResult } from './load.js';
import { peerMarkdown } from './peer-report.js';
import type { AccountLoadResult } from './scenarios/account-load.js';
import type { LifecycleResult } from './scenarios/lifecycle.js';
import type { MemoryResult } from './scenarios/memory.js';
import type { PeerResult } from './scenarios/peer.js';
import type { ReplayResult } from './scenarios/replay.js';
import type { SubmitInFlightResult } from './scenarios/submit-inflight.js';

export interface BenchResults {
  date: string;
  command: string;
  quick: boolean;
  /** Where the upstream simulator ran in the gateway scenarios (older results: in process). */
  simulator: SimulatorMode;
  machine: { cpus: number; model: string; memoryGiB: number; node: string };
  baseline: LoadResult;
  poll: LoadResult;
  submit: LoadResult;
  lifecycle: LifecycleResult;
  replay: ReplayResult;
  memory: MemoryResult;
  accountLoad: AccountLoadResult;
  submitInFlight: SubmitInFlightResult;
  /** LiteLLM beside this gateway in front of one stand-in upstream (runs before 2026-11-28: absent). */
  peer?: PeerResult;
  /** Every figure with its target and whether it is met, as the table shows them. */
  figures?: Row[];
}

export function machine() {
  return { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
}

export interface Row {
  figure: string;
  measured: string;
  /** The goal. */
  target: string;
  /** null: a figure reported without a target. */
  met: boolean | null;
  /** The step toward the goal the current performance issue asks for, where it names one. */
  step?: { target: string; met: boolean };
}

const pct = (a: number, b: number) => `${Math.round((100 * a) / b)}%`;

/** `; <label>: engine 2.1 ms, api 0.4 ms` from each part's figure, or nothing when there is none. */
function perPart(label: string, figures: ReadonlyArray<readonly [string, string]>): string {
  return figures.length === 0 ? '' : `; ${label}: ${figures.map(([part, figure]) => `${part} ${figure}`).join(', ')}`;
}

/** The memory of each process, when there are several (the sum is the figure); runs before 2026-11-28 did not measure it. */
function rssByPart(memory: MemoryResult, mb: (bytes: number) => number): string {
  const parts = Object.entries(memory.peakRssBytesByPart ?? {});
  return perPart('by process', parts.length < 2 ? [] : parts.map(([part, bytes]) => [part, `${mb(bytes)} MB`] as const));
}

/** The CPU per task of each working process (not the supervisor); runs before 2026-11-28 did not measure it. */
function cpuPerTask(lifecycle: LifecycleResult): string {
  const parts = Object.entries(lifecycle.cpuMsPerTask ?? {}).filter(([part]) => part !== 'supervisor');
  return perPart(
    'CPU per task',
    parts.map(([part, ms]) => [part, `${ms} ms`] as const),
  );
}

export function rows(r: BenchResults): Row[] {
  const mb = (b: number) => Math.round(b / 2 ** 20);
  return [
    {
      figure: 'baseline (fastify hello-world)',
      measured: `${r.baseline.requestsPerSecond} req/s, p50 ${r.baseline.p50Ms} ms, p99 ${r.baseline.p99Ms} ms`,
      target: '—',
      met: true,
    },
    {
      figure: 'poll GET /v1/images/async/generations/{id}',
      measured: `${r.poll.requestsPerSecond} req/s (${pct(r.poll.requestsPerSecond, r.baseline.requestsPerSecond)} of baseline), p50 ${r.poll.p50Ms} ms, p99 ${r.poll.p99Ms} ms, non-2xx ${r.poll.non2xx}`,
      target: '≥ 70% of baseline, p99 ≤ 10 ms',
      met: r.poll.requestsPerSecond >= 0.7 * r.baseline.requestsPerSecond && r.poll.p99Ms <= 10 && r.poll.non2xx === 0,
    },
    {
      figure: 'submit POST /v1/images/async/generations (durable)',
      measured: `${r.submit.requestsPerSecond} req/s (${pct(r.submit.requestsPerSecond, r.baseline.requestsPerSecond)} of baseline), p50 ${r.submit.p50Ms} ms, p99 ${r.submit.p99Ms} ms, non-2xx ${r.submit.non2xx}`,
      target: '≥ 35% of baseline, p99 ≤ 25 ms',
      met: r.submit.requestsPerSecond >= 0.35 * r.baseline.requestsPerSecond && r.submit.p99Ms <= 25 && r.submit.non2xx === 0,
      step: {
        target: '≥ 15% of baseline, p99 ≤ 50 ms',
        met: r.submit.requestsPerSecond >= 0.15 * r.baseline.requestsPerSecond && r.submit.p99Ms <= 50 && r.submit.non2xx === 0,
      },
    },
    {
      figure: `life cycle (${r.lifecycle.tasks} tasks to completion)`,
      measured: `${r.lifecycle.tasksPerSecond} tasks/s (${r.lifecycle.seconds.toFixed(1)} s), projection lag p50 ${r.lifecycle.lagP50Ms} ms, p99 ${r.lifecycle.lagP99Ms} ms${cpuPerTask(r.lifecycle)}`,
      target: '≥ 2,000 tasks/s, lag p99 ≤ 50 ms',
      met: r.lifecycle.tasksPerSecond >= 2000 && (r.lifecycle.lagP99Ms ?? Infinity) <= 50,
      step: { target: '≥ 1,000 tasks/s, lag p99 ≤ 100 ms', met: r.lifecycle.tasksPerSecond >= 1000 && (r.lifecycle.lagP99Ms ?? Infinity) <= 100 },
    },
    {
      figure: `audit replay (${r.replay.events} events)`,
      measured: `${r.replay.auditEventsPerSecond} events/s (account streams only, ${r.replay.auditSnapshots ?? 0} snapshots checked, ${r.replay.auditSeconds.toFixed(1)} s)`,
      target: '≥ 250,000 events/s',
      met: r.replay.auditEventsPerSecond >= 250_000,
      step: { target: '≥ 250,000 events/s', met: r.replay.auditEventsPerSecond >= 250_000 },
    },
    {
      figure: `projection rebuild (${r.replay.events} events)`,
      measured: `${r.replay.rebuildEventsPerSecond} events/s (${r.replay.rebuildSeconds.toFixed(1)} s)`,
      target: '≥ 250,000 events/s',
      met: r.replay.rebuildEventsPerSecond >= 250_000,
      step: { target: '≥ 250,000 events/s', met: r.replay.rebuildEventsPerSecond >= 250_000 },
    },
    {
      figure: `memory (${r.memory.tasks} tasks in flight)`,
      measured: `peak RSS ${mb(r.memory.peakRssBytes)} MB (idle ${mb(r.memory.idleRssBytes)} MB)${rssByPart(r.memory, mb)}${r.memory.peakPssBytes ? `; peak PSS ${mb(r.memory.peakPssBytes)} MB` : ''}`,
      target: '≤ 400 MB at 100,000 tasks',
      met: r.memory.peakRssBytes <= 400 * 2 ** 20,
      step: { target: '≤ 400 MB at 100,000 tasks', met: r.memory.peakRssBytes <= 400 * 2 ** 20 },
    },
    {
      figure: `account load (${r.accountLoad.settledTasks} settled tasks, ${r.accountLoad.streamEvents} events)`,
      measured: `median ${r.accountLoad.loadMedianMs} ms, max ${r.accountLoad.loadMaxMs} ms of ${r.accountLoad.loadMs.length} cold loads (${r.accountLoad.eventsRead} events read back to the last of ${r.accountLoad.snapshots} snapshots; full replay ${r.accountLoad.fullReplayMs} ms)`,
      target: '≤ 50 ms at 1,000,000 settled tasks',
      met: r.accountLoad.loadMedianMs <= 50,
    },
    {
      figure: `submit with ${r.submitInFlight.tasksInFlight} tasks in flight`,
      measured: `${r.submitInFlight.submit.requestsPerSecond} req/s (${pct(r.submitInFlight.submit.requestsPerSecond, r.baseline.requestsPerSecond)} of baseline), p50 ${r.submitInFlight.submit.p50Ms} ms, p99 ${r.submitInFlight.submit.p99Ms} ms, non-2xx ${r.submitInFlight.submit.non2xx}`,
      target: 'reported (at 10,000 in flight)',
      met: null,
    },
  ];
}

function simulatorLine(mode: SimulatorMode): string {
  return mode === 'out-of-process'
    ? 'Simulator: out of process (`src/simulator/main.ts` on its own port; the gateway measured alone).'
    : 'Simulator: in process (mounted in the gateway at `/_sim`; both ends of every upstream call count against the gateway).';
}

export function markdown(r: BenchResults): string {
  const lines = [
    `### ${r.date}${r.quick ? ' (quick)' : ''}`,
    '',
    `Machine: ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}. Command: \`${r.command}\`. Load: autocannon, loopback, 50 connections.`,
    simulatorLine(r.simulator),
    '',
    '| figure | measured | goal | met | step asked now | met |',
    '|---|---|---|---|---|---|',
    ...rows(r).map(
      (row) =>
        `| ${row.figure} | ${row.measured} | ${row.target} | ${row.met === null ? '—' : row.met ? 'yes' : 'no'} | ${row.step?.target ?? '—'} | ${row.step ? (row.step.met ? 'yes' : 'no') : '—'} |`,
    ),
    '',
    ...(r.peer ? [peerMarkdown(r.peer)] : []),
  ];
  return lines.join('\n');
}
