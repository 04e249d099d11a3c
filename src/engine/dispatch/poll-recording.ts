/**
 * The poll recording: what an upstream answered, turned into the task's events. Progress is
 * recorded as it changes; a success has its results re-hosted and completes the task (a result
 * that can never be stored fails it instead); a failure, a task the upstream lost, and a
 * deadline passed fail it. Each append is conditional on the revision the poller last saw.
 */
import type { KnownTask } from '../../domain/task.js';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { isPermanentRehostFailure } from '../media/assets.js';
import { rehostCompletion, type CompletionData } from '../media/rehost.js';
import { TaskDeadlineError, taskDeadline, type TaskDeadline } from '../tasks/deadline.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import type { Catalog } from '../channels/catalog.js';
import { resolveBaseUrl, type UpstreamRegistry, type UpstreamStatus } from '../channels/upstream.js';
import { executeTask } from '../commands/task-commands.js';
import type { Tracked } from './poll-schedule.js';
import { asCall } from './poll-calls.js';

export interface PollRecordingDeps {
  events: EventStore;
  assets: AssetStore;
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  selfUrl: () => string;
  clock: () => Date;
  assetRetentionSeconds: number;
  maxAgeSeconds?: number;
  outbound: (channelBaseUrl: string) => OutboundPolicy;
  /** Still the poller's to follow: an entry that is not any more records nothing further. */
  followed(entry: Tracked): boolean;
}

type Progress = Extract<UpstreamStatus, { state: 'queued' | 'in_progress' }>;

export interface PollRecording {
  /** Progress recorded (the entry's task and revision move on); true when the task has ended. */
  progress(entry: Tracked, status: Progress): Promise<boolean>;
  /**
   * A final answer recorded (results re-hosted first); true when the task has ended, false when
   * the entry stopped being followed meanwhile (nothing recorded). Throws when re-hosting failed
   * in a way another try may mend, or at the deadline (TaskDeadlineError).
   */
  finish(entry: Tracked, status: UpstreamStatus, deadline?: TaskDeadline): Promise<boolean>;
  /** The task failed with `timeout`: no result by its deadline. */
  timeOut(task: KnownTask, deadline: TaskDeadline): Promise<void>;
}

export function createPollRecording(deps: PollRecordingDeps): PollRecording {
  const nowSeconds = () => Math.floor(deps.clock().getTime() / 1000);
  const meta = (t: KnownTask): EventMetadata => ({ at: deps.clock().toISOString(), accountId: t.accountId, correlationId: t.taskId });
  const known = (entry: Tracked) => (entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision });
  const fail = (entry: Tracked, code: string, reason: string, seen = known(entry)) =>
    executeTask(deps.events, entry.task.taskId, { type: 'FailTask', data: { code, reason, completedAt: nowSeconds() } }, meta(entry.task), seen);

  /** The results re-hosted: the task completes; a result that can never be stored fails it. */
  async function succeed(entry: Tracked, status: Extract<UpstreamStatus, { state: 'succeeded' }>, deadline?: TaskDeadline): Promise<boolean> {
    const t = entry.task;
    const seen = known(entry);
    const channel = deps.catalog.channel(t.channelId!)!;
    const adapter = deps.upstreams.get(channel.family)!;
    const baseUrl = resolveBaseUrl(channel.baseUrl, deps.selfUrl());
    let completion: CompletionData;
    try {
      completion = await asCall(entry, (abort) =>
        rehostCompletion(deps, {
          task: t,
          channel: { key: channel.key, baseUrl },
          answer: status,
          delivery: adapter.delivery(t),
          deadline: deadline ?? taskDeadline(t.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds),
          policy: deps.outbound(baseUrl),
          abort,
        }),
      );
    } catch (err) {
      if (!deps.followed(entry)) return false;
      if (err instanceof TaskDeadlineError || !isPermanentRehostFailure(err)) throw err;
      await fail(entry, 'result_unavailable', `the result could not be stored: ${err instanceof Error ? err.message : String(err)}`, seen);
      return true;
    }
    // Revoked while re-hosting: the partition's new owner completes the task.
    if (!deps.followed(entry)) return false;
    await executeTask(deps.events, t.taskId, { type: 'CompleteTask', data: completion }, meta(t), seen);
    return true;
  }

  return {
    async progress(entry, status) {
      const result = await executeTask(
        deps.events,
        entry.task.taskId,
        {
          type: 'RecordProgress',
          data: {
            status: status.state,
            progress: Math.max(0, Math.min(100, Math.round(status.progress))),
            ...(status.snapshot ? { upstream: status.snapshot } : {}),
          },
        },
        meta(entry.task),
        known(entry),
      );
      if (result.state.status !== 'none') entry.task = result.state;
      entry.revision = result.revision;
      return result.state.final;
    },
    async finish(entry, status, deadline) {
      if (status.state === 'succeeded') return succeed(entry, status, deadline);
      if (status.state === 'failed') await fail(entry, status.code, status.reason);
      else if (status.state === 'lost') await fail(entry, 'upstream_task_lost', status.reason);
      return true;
    },
    async timeOut(t, deadline) {
      await executeTask(
        deps.events,
        t.taskId,
        { type: 'FailTask', data: { code: 'timeout', reason: `no result within ${deadline.maxAgeSeconds} s`, completedAt: nowSeconds() } },
        meta(t),
      );
    },
  };
}
