/**
 * The poll recording: what an upstream answered, turned into the task's events. Progress is
 * recorded as it changes; a success has its results re-hosted and completes the task (a result
 * that can never be stored fails it instead); a failure, a task the upstream lost, and a
 * deadline passed fail it. Each append is conditional on the revision the round read.
 */
import type { KnownTask } from '../../domain/task.js';
import type { EventMetadata } from '../../ports/event-store.js';
import { isPermanentRehostFailure } from '../media/assets.js';
import { rehostCompletion, type CompletionData } from '../media/rehost.js';
import { TaskDeadlineError, taskDeadline, type TaskDeadline } from '../tasks/deadline.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import { resolveBaseUrl, type UpstreamStatus } from '../channels/upstream.js';
import { executeTask } from '../commands/task-commands.js';
import type { Tracked } from './poll-schedule.js';
import { asCall } from './poll-calls.js';
import { nowSeconds } from '../../lib/time.js';
import type { UpstreamDeps } from '../engine-deps.js';

export interface PollRecordingDeps extends UpstreamDeps {
  assetRetentionSeconds: number;
  outbound: (channelBaseUrl: string) => OutboundPolicy;
  /** Still the poller's to follow: an entry that is not any more records nothing further. */
  followed(entry: Tracked): boolean;
  /** The task has ended (its end is recorded): the poller stops following it. */
  ended(taskId: string): void;
}

type Progress = Extract<UpstreamStatus, { state: 'queued' | 'in_progress' }>;

/** The task's state as read for this round, with its revision: the round's appends are conditional on it. */
export interface RoundState {
  state: KnownTask;
  revision: number;
}

export interface PollRecording {
  /** Progress appended, on the revision read; the caller moves the entry on to the result. */
  progress(seen: RoundState, status: Progress): ReturnType<typeof executeTask>;
  /**
   * A final answer recorded (results re-hosted first) and the task ended, unless the entry
   * stopped being followed meanwhile (then nothing is recorded). Throws when re-hosting failed
   * in a way another try may mend, or at the deadline (TaskDeadlineError).
   */
  finish(entry: Tracked, seen: RoundState, status: UpstreamStatus, deadline?: TaskDeadline): Promise<void>;
  /** The task failed with `timeout` (no result by its deadline) and ended. */
  timeOut(seen: RoundState, deadline: TaskDeadline): Promise<void>;
}

export function createPollRecording(deps: PollRecordingDeps): PollRecording {
  const meta = (t: KnownTask): EventMetadata => ({ at: deps.clock().toISOString(), accountId: t.accountId, correlationId: t.taskId });
  const fail = (seen: RoundState, code: string, reason: string) =>
    executeTask(deps.events, seen.state.taskId, { type: 'FailTask', data: { code, reason, completedAt: nowSeconds(deps.clock) } }, meta(seen.state), seen);

  return {
    // Not async: the append's own promise, so the poller goes on exactly when it is recorded.
    progress(seen, status) {
      return executeTask(
        deps.events,
        seen.state.taskId,
        {
          type: 'RecordProgress',
          data: {
            status: status.state,
            progress: Math.max(0, Math.min(100, Math.round(status.progress))),
            ...(status.snapshot ? { upstream: status.snapshot } : {}),
          },
        },
        meta(seen.state),
        seen,
      );
    },

    async finish(entry, seen, status, deadline) {
      const t = seen.state;
      if (status.state === 'succeeded') {
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
          if (!deps.followed(entry)) return;
          if (err instanceof TaskDeadlineError || !isPermanentRehostFailure(err)) throw err;
          await fail(seen, 'result_unavailable', `the result could not be stored: ${err instanceof Error ? err.message : String(err)}`);
          deps.ended(t.taskId);
          return;
        }
        // Revoked while re-hosting: the partition's new owner completes the task.
        if (!deps.followed(entry)) return;
        await executeTask(deps.events, t.taskId, { type: 'CompleteTask', data: completion }, meta(t), seen);
      } else if (status.state === 'failed') {
        await fail(seen, status.code, status.reason);
      } else if (status.state === 'lost') {
        await fail(seen, 'upstream_task_lost', status.reason);
      }
      deps.ended(t.taskId);
    },

    async timeOut(seen, deadline) {
      await fail(seen, 'timeout', `no result within ${deadline.maxAgeSeconds} s`);
      deps.ended(seen.state.taskId);
    },
  };
}
