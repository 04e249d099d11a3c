/**
 * What a benchmark reads of a process tree from /proc (Linux): its pids, each one's peak RSS
 * (VmHWM) and its CPU time (utime + stime). Trees, because a served request may be handled by
 * any process of one: tsx's node child, or LiteLLM's uvicorn workers under their supervisor.
 * Off Linux every figure reads as 0 (the benchmark runs on Linux; nothing else here needs /proc).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { roleOf } from '../test/support/supervised.js';

/** The pid and all its descendants, as they are now. */
export function treePids(pid: number): number[] {
  return [pid, ...childPids(pid)];
}

function childPids(pid: number): number[] {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return kids.flatMap((k) => [k, ...childPids(k)]);
  } catch {
    return [];
  }
}

/** A figure in kB of one process's /proc file (`VmHWM:` of `status`, `Pss:` of `smaps_rollup`), in bytes; 0 once it is gone. */
function procBytes(pid: number, file: string, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak resident set size of one process (VmHWM), in bytes; 0 once it is gone. */
export const vmHwm = (pid: number): number => procBytes(pid, 'status', 'VmHWM');

/** Sum of the peaks (VmHWM) of a tree's processes: each worker of a server holds its own memory. */
export function peakRssOfTree(pid: number): number {
  return treePids(pid).reduce((sum, p) => sum + vmHwm(p), 0);
}

/**
 * Proportional set size of a tree now, in bytes: each page counted once, shared pages split
 * between the processes that map them. Summed peak RSS counts Node's own code (about 45 MB) once
 * per process; this is what the tree takes from the machine.
 */
export function pssOfTree(pid: number): number {
  return treePids(pid).reduce((sum, p) => sum + procBytes(p, 'smaps_rollup', 'Pss'), 0);
}

let clockTicks: number | undefined;
/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 on every Linux we run). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * The fields of /proc/<pid>/stat from field 3 (the state) on; undefined once the process is
 * gone. The command name before them may hold spaces and parentheses: they start after the last ')'.
 */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system, all threads) the processes have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    // Fields 14 and 15 of proc(5) (utime, stime); `fields` starts at field 3. A process gone has no time to read.
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / ticksPerSecond();
}

/**
 * CPU seconds of the tree once it is idle again: work a request caused after its answer (the
 * gateway's dispatch, poll and download of a video it accepted) counts against that request.
 * Idle: under 2 % of a core over half a second; gives up waiting after `maxMs`.
 */
export async function cpuSecondsWhenIdle(pid: number, maxMs = 60_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  let last = cpuSeconds(treePids(pid));
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuSeconds(treePids(pid));
    if (now - last < 0.01 || Date.now() > deadline) return now;
    last = now;
  }
}

/** `measure` of each process of a gateway's tree, summed by its part (roleOf). */
function byPart(pid: number, measure: (pid: number) => number): Record<string, number> {
  const parts: Record<string, number> = {};
  for (const p of treePids(pid)) {
    const part = roleOf(p);
    parts[part] = (parts[part] ?? 0) + measure(p);
  }
  return parts;
}

/** CPU seconds so far of each part of a gateway (roleOf). */
export const cpuSecondsByPart = (pid: number): Record<string, number> => byPart(pid, (p) => cpuSeconds([p]));

/** Peak RSS (VmHWM) so far of each part of a gateway (roleOf), in bytes. */
export const peakRssByPart = (pid: number): Record<string, number> => byPart(pid, vmHwm);

/** Milliseconds of CPU per unit of work of each part between two readings of cpuSecondsByPart. */
export function cpuMsPerUnit(before: Record<string, number>, after: Record<string, number>, units: number): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([part, seconds]) => [part, Math.round((((seconds - (before[part] ?? 0)) * 1000) / units) * 100) / 100]));
}
