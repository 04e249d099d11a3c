/**
 * The state of a simulated task as a pure function of its submit time and the clock: `queued`
 * for the first step, `in_progress` with rising progress (25/50/75 % at steps 1, 2, 3), then
 * `completed` (or `failed` with `[sim:fail]`) at step 4; `[sim:slow]` multiplies the steps by 5.
 * A step of 0 ms finishes a task at once.
 */
import type { SimMarkers } from './markers.js';

export const DEFAULT_STEP_MS = 150;
export const BASE_STEPS = 4;
export const SLOW_FACTOR = 5;

export type TimelineInput = Readonly<{
  /** Submit time, epoch milliseconds. */
  submittedAt: number;
  stepMs: number;
  markers: Pick<SimMarkers, 'fail' | 'slow'>;
  /** Current time, epoch milliseconds. */
  now: number;
}>;

export type TimelineState =
  | Readonly<{ status: 'queued'; progress: 0 }>
  | Readonly<{ status: 'in_progress'; progress: number }>
  /** Terminal states report 100 % and the time they were reached. */
  | Readonly<{ status: 'completed' | 'failed'; progress: 100; finishedAt: number }>;

export function totalSteps(markers: Pick<SimMarkers, 'slow'>): number {
  return markers.slow ? BASE_STEPS * SLOW_FACTOR : BASE_STEPS;
}

/** Epoch ms at which the task reaches its terminal state. */
export function finishTime(submittedAt: number, stepMs: number, markers: Pick<SimMarkers, 'slow'>): number {
  return submittedAt + Math.max(0, stepMs) * totalSteps(markers);
}

export function timeline(input: TimelineInput): TimelineState {
  const { submittedAt, stepMs, markers, now } = input;
  const steps = totalSteps(markers);
  const step = stepMs <= 0 ? steps : Math.floor(Math.max(0, now - submittedAt) / stepMs);
  if (step >= steps) {
    return { status: markers.fail ? 'failed' : 'completed', progress: 100, finishedAt: finishTime(submittedAt, stepMs, markers) };
  }
  if (step < 1) return { status: 'queued', progress: 0 };
  return { status: 'in_progress', progress: Math.floor((step * 100) / steps) };
}

/** Stepping option: explicit value, else `SIM_STEP_MS`, else the default. */
export function resolveStepMs(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) return checkStep(option, 'stepMs option');
  const raw = env.SIM_STEP_MS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_STEP_MS;
  return checkStep(Number(raw), 'SIM_STEP_MS');
}

function checkStep(value: number, what: string): number {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${what} must be a non-negative number of milliseconds`);
  return value;
}

export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000);
