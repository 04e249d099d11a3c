/**
 * Reading the simulator's submit log (src/simulator/submit-log.ts) against gateway tasks: which
 * accepted submits were still running upstream at a moment (work in flight at a kill), how often
 * each gateway task reached the upstream, and which repeated submits no kill explains.
 */
import type { SubmitRecord } from '../../src/simulator/submit-log.js';
import { BASE_STEPS, SLOW_FACTOR } from '../../src/simulator/timeline.js';
import type { RecordedDomainEvent } from '../../src/domain/recorded.js';

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

/** A task's submit claims (UpstreamSubmitClaimed) as the gateway recorded them: epoch and when, epoch ms. */
export type ClaimTimes = ReadonlyArray<{ epoch: number; at: number }>;

/** The submit claims of every task in `events` (a read of the task streams), oldest first. */
export function claimsPerTask(events: ReadonlyArray<RecordedDomainEvent | undefined>): Map<string, ClaimTimes> {
  const claims = new Map<string, Array<{ epoch: number; at: number }>>();
  for (const e of events) {
    if (e?.type !== 'UpstreamSubmitClaimed') continue;
    const taskId = e.streamName.slice('task-'.length);
    claims.set(taskId, [...(claims.get(taskId) ?? []), { epoch: e.data.epoch ?? 0, at: Date.parse(e.metadata.at) }]);
  }
  return claims;
}

/**
 * Repeated submits of one task that no kill explains. Every upstream submit is made under a
 * claim of its own (dispatcher.ts), and a gateway claims anew over its own open claim only when
 * it lost its memory of it: a kill. So a task may reach the upstream once, plus once for each
 * kill that fell between two of its claims; more is a second submit with no kill between.
 *
 * The claims' times are the gateway's own (read before each claim was appended, by a live
 * process), so a kill's place among them is exact. The upstream's arrival times are not: a
 * submit written just before a kill may be read by the upstream after it.
 */
export function unexplainedRepeats(
  perTask: ReadonlyMap<string, readonly SubmitRecord[]>,
  claims: ReadonlyMap<string, ClaimTimes>,
  killsAt: readonly number[],
): string[] {
  const found: string[] = [];
  for (const [taskId, submits] of perTask) {
    if (submits.length < 2) continue;
    const own = claims.get(taskId) ?? [];
    const killGaps = own.slice(1).filter((c, i) => killsAt.some((k) => k > own[i]!.at && k < c.at)).length;
    if (submits.length <= own.length && submits.length - 1 <= killGaps) continue;
    found.push(
      `${taskId}: ${submits.length} accepted submits (${submits.map((s) => `#${s.seq} at ${s.at} key ${s.idempotencyKey ?? '-'}`).join(', ')}),` +
        ` ${own.length} claims (${own.map((c) => `epoch ${c.epoch} at ${c.at}`).join(', ')}), ${killGaps} kills between claims` +
        ` (kills at ${killsAt.filter((k) => k >= (own[0]?.at ?? submits[0]!.at) - 5000 && k <= submits.at(-1)!.at + 5000).join(', ') || 'none near'})`,
    );
  }
  return found;
}
