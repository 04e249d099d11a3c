/**
 * Reading the simulator's submit log (src/simulator/submit-log.ts) against gateway tasks: which
 * accepted submits were still running upstream at a moment (work in flight at a kill), how often
 * each gateway task reached the upstream, and which repeated submits no kill explains.
 */
import type { SubmitRecord } from '../../src/simulator/submit-log.js';
import { BASE_STEPS, SLOW_FACTOR } from '../../src/simulator/timeline.js';

/** The upstream took the task on: it minted an id (refusals mint none). */
export const accepted = (s: SubmitRecord): boolean => s.ids.length > 0;

/** When the simulator finishes the task of an accepted submit (timeline.ts), epoch ms. */
export function upstreamFinish(s: SubmitRecord, stepMs: number): number {
  const slow = /\[sim:slow\]/i.test(s.promptHead ?? '');
  return s.at + stepMs * BASE_STEPS * (slow ? SLOW_FACTOR : 1);
}

/** Accepted submits that arrived before `at` and whose upstream task had not finished by then. */
export function runningUpstreamAt(submits: readonly SubmitRecord[], at: number, stepMs: number): SubmitRecord[] {
  return submits.filter((s) => accepted(s) && s.at < at && upstreamFinish(s, stepMs) > at);
}

/**
 * Accepted submits per gateway task, oldest first. A submit names its task by the
 * `Idempotency-Key` header (`<task id>:<channel id>`, submitReference) when it carries one, else by its prompt
 * (`taskOfPrompt`: the test's prompts are unique per task). Submits of no known task are
 * returned apart.
 */
export function acceptedPerTask(
  submits: readonly SubmitRecord[],
  taskOfPrompt: ReadonlyMap<string, string>,
): { perTask: Map<string, SubmitRecord[]>; unattributed: SubmitRecord[] } {
  const perTask = new Map<string, SubmitRecord[]>();
  const unattributed: SubmitRecord[] = [];
  for (const s of submits) {
    if (!accepted(s)) continue;
    const taskId = s.idempotencyKey?.split(':')[0] ?? taskOfPrompt.get(s.promptHead ?? '');
    if (taskId === undefined) unattributed.push(s);
    else perTask.set(taskId, [...(perTask.get(taskId) ?? []), s]);
  }
  for (const list of perTask.values()) list.sort((a, b) => a.seq - b.seq);
  return { perTask, unattributed };
}

/**
 * Repeated submits of one task that no kill explains: between two accepted submits of the same
 * task a gateway must have died (the one window the submit lease leaves open, dispatcher.ts).
 */
export function unexplainedRepeats(perTask: ReadonlyMap<string, readonly SubmitRecord[]>, killsAt: readonly number[]): string[] {
  const found: string[] = [];
  for (const [taskId, list] of perTask) {
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1]!.at;
      const after = list[i]!.at;
      if (!killsAt.some((k) => k >= before && k <= after)) found.push(`${taskId}: submits #${list[i - 1]!.seq} and #${list[i]!.seq} with no kill between`);
    }
  }
  return found;
}
