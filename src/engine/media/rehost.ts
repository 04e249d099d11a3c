/**
 * The one re-host path for an upstream's successful answer, taken by the poller (async tasks)
 * and by synchronous calls: the results are stored in the asset store (assets.ts,
 * rehostResults) with downloads from the channel under its outbound policy, all before the
 * task's deadline, and the answer becomes the data of the task's CompleteTask command.
 *
 * What a failure means stays with the caller: the poller tries a passing failure again later,
 * a synchronous call has no later and fails the task at once.
 */
import type { EventDataOf } from '../../domain/events.js';
import type { AssetStore } from '../../ports/asset-store.js';
import { channelRehostDeps, rehostResults, resultLimitOf } from './assets.js';
import { beforeDeadline, type TaskDeadline } from '../tasks/deadline.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import type { SubmittedTaskData, UpstreamResult } from '../channels/upstream.js';
import { nowSeconds } from '../../lib/time.js';

export type CompletionData = EventDataOf<'TaskSucceeded'>;

/** What an upstream answered for a task that succeeded. */
export interface UpstreamSuccess {
  results: readonly UpstreamResult[];
  usage: { units: number; tier?: string };
  /** The upstream's own answer, kept in TaskSucceeded.upstream. */
  snapshot?: Record<string, unknown>;
}

export interface RehostDeps {
  assets: AssetStore;
  clock: () => Date;
  /** How long stored results are kept. */
  assetRetentionSeconds: number;
}

export interface RehostRequest {
  task: Pick<SubmittedTaskData, 'taskId' | 'basis'>;
  /** The channel that answered, with its base URL resolved (relative result URLs are on it). */
  channel: { key: string; baseUrl: string };
  answer: UpstreamSuccess;
  delivery: 'url' | 'b64';
  deadline: TaskDeadline;
  /** The outbound URL policy for the downloads (the channel's origin trusted). */
  policy: OutboundPolicy;
  /** Also stops the downloads (the task is no longer this instance's to finish). */
  abort?: AbortSignal;
}

/**
 * Stores the answer's results and returns the CompleteTask data. Throws what re-hosting threw
 * (TaskDeadlineError at the deadline); nothing is left stored then.
 */
export async function rehostCompletion(deps: RehostDeps, r: RehostRequest): Promise<CompletionData> {
  // Taken before the downloads: retention runs from the answer, not from when storing ended.
  const assetsExpireAt = nowSeconds(deps.clock) + deps.assetRetentionSeconds;
  const results = await beforeDeadline(r.deadline, deps.clock(), (signal) =>
    rehostResults(
      channelRehostDeps(deps, r.channel, r.policy, r.abort ? AbortSignal.any([signal, r.abort]) : signal),
      r.task.taskId,
      r.answer.results,
      r.delivery,
      resultLimitOf(r.task.basis),
    ),
  );
  return {
    results,
    usage: r.answer.usage,
    ...(r.answer.snapshot ? { upstream: r.answer.snapshot } : {}),
    assetsExpireAt: results.some((item) => item.assetKey) ? assetsExpireAt : 0,
    completedAt: nowSeconds(deps.clock),
  };
}
