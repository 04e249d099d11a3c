/**
 * What every simulated asynchronous upstream does with its tasks: the id carries the task's
 * markers, submit time and step (its timed fields), its state is a point on its timeline, its
 * result files are kept for the asset retention after it finished, and a poll of an id that
 * names no task, or of one `[sim:4xx-poll]` loses, is a 404.
 */
import { z } from 'zod';
import type { SimContext } from './context.js';
import { notFound } from './http.js';
import { markersFromFlags, markersToFlags, type SimMarkers } from './markers.js';
import { timeline, type TimelineState } from './timeline.js';

/** The fields of an id's payload the timeline reads, in each family's payload schema. */
export const TIMED_FIELDS = {
  /** marker flags (markers.ts) */
  k: z.string(),
  /** submit time, epoch ms */
  t: z.number(),
  /** step ms at submit */
  s: z.number().min(0),
};

export type TimedTask = Readonly<{ k: string; t: number; s: number }>;

/** The timed fields of a task submitted now with these markers. */
export function timedNow(markers: SimMarkers, ctx: SimContext): TimedTask {
  return { k: markersToFlags(markers), t: ctx.now(), s: ctx.stepMs };
}

/** The task's markers, and where it stands on its timeline now. */
export function taskState(task: TimedTask, ctx: SimContext): { markers: SimMarkers; state: TimelineState } {
  const markers = markersFromFlags(task.k);
  return { markers, state: timeline({ submittedAt: task.t, stepMs: task.s, markers, now: ctx.now() }) };
}

/** Whether the result files of a task that finished at `finishedAt` are deleted by now. */
export function resultsExpired(finishedAt: number, ctx: SimContext): boolean {
  return ctx.now() >= finishedAt + ctx.assetRetentionMs;
}

/** The task a poll names (`decoded`: undefined for an id that names none), else 404 `task_not_exist`, `prefix` leading its message. */
export function polledTask<T extends TimedTask>(decoded: T | undefined, prefix = ''): T {
  if (!decoded) throw notFound('task_not_exist', `${prefix}no such task`);
  if (markersFromFlags(decoded.k).lostOnPoll) throw notFound('task_not_exist', `${prefix}the upstream lost this task ([sim:4xx-poll])`);
  return decoded;
}
