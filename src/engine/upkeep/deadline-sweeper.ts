/**
 * The backstop behind every task's deadline. The dispatcher and the poller fail a task at its
 * deadline themselves; this pass catches whatever they could not reach in time — a dispatch
 * still waiting for a free slot, a task whose dispatch was lost, a poll that never came — and
 * fails it with `timeout`, so its reservation is released. It acts only `graceMs` after the
 * deadline, so the precise paths get their turn first; a task that ended meanwhile is left as
 * it is (failing a final task decides nothing). Synchronous tasks are the reconciler's.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { InflightDoc } from '../../../projections/inflight.js';
import { dueDocuments } from './due-documents.js';
import type { Catalog } from '../channels/catalog.js';
import { taskDeadline } from '../tasks/deadline.js';
import type { Ownership } from '../dispatch/ownership.js';
import { periodic, type Periodic } from './periodic.js';
import { executeTask, readTask } from '../commands/task-commands.js';
import type { UpstreamRegistry } from '../channels/upstream.js';

export function createDeadlineSweeper(deps: {
  events: EventStore;
  views: ViewStore;
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  ownership: Ownership;
  log: Logger;
  clock: () => Date;
  maxAgeSeconds?: number;
  graceMs?: number;
}): Periodic & { intervalMs: number } {
  const ages = [...deps.upstreams.values()].map((a) => a.maxAgeSeconds);
  const shortest = deps.maxAgeSeconds ?? Math.min(...ages);
  const longest = deps.maxAgeSeconds ?? Math.max(...ages);
  // A quarter of the shortest maximum age, at most 10 s: tiny ages (tests) are swept promptly.
  const graceMs = deps.graceMs ?? Math.min(10_000, (shortest * 1000) / 4);

  /** The task's own maximum age: its channel's family (or its first candidate's). */
  function maxAgeOf(channelId: string | undefined): number {
    if (deps.maxAgeSeconds !== undefined) return deps.maxAgeSeconds;
    const channel = channelId ? deps.catalog.channel(channelId) : undefined;
    return (channel && deps.upstreams.get(channel.family)?.maxAgeSeconds) || longest;
  }

  const sweeper = periodic('deadlines', deps.log, async function pass(): Promise<number> {
    const now = deps.clock();
    // Oldest first; none younger than the shortest maximum age can be late.
    const latestCandidate = Math.floor((now.getTime() - graceMs) / 1000) - shortest;
    const inflight = await dueDocuments<InflightDoc>(
      deps.views,
      'inflight',
      { sync: false },
      { sortBy: 'createdAt', limit: 1000 },
      (doc) => doc.createdAt <= latestCandidate,
    );
    let failed = 0;
    for (const { doc } of inflight) {
      if (!deps.ownership.owns(doc.taskId)) continue;
      const known = await readTask(deps.events, doc.taskId);
      const { state } = known;
      if (state.status === 'none' || state.final || state.sync) continue;
      const deadline = taskDeadline(state.createdAt, maxAgeOf(state.channelId ?? state.channelCandidates[0]));
      if (now.getTime() < deadline.at + graceMs) continue;
      const result = await executeTask(
        deps.events,
        doc.taskId,
        { type: 'FailTask', data: { code: 'timeout', reason: `no result within ${deadline.maxAgeSeconds} s`, completedAt: Math.floor(now.getTime() / 1000) } },
        { at: now.toISOString(), accountId: state.accountId, correlationId: doc.taskId },
        known,
      );
      if (result.events.length > 0) {
        failed++;
        deps.log.warn({ taskId: doc.taskId, maxAgeSeconds: deadline.maxAgeSeconds }, 'failed a task past its deadline that nothing else had ended');
      }
    }
    return failed;
  });
  return Object.assign(sweeper, { intervalMs: Math.max(250, Math.min(5000, graceMs)) });
}
