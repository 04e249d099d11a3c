/**
 * Synchronous calls are tasks too: the request, its reservation and its settlement are events
 * in a task stream, so auditors see them like any task; only the client waits. The upstream
 * call runs in the request; a client that disconnects does not stop it, so the reservation is
 * always settled or released. The calls and the re-hosting run under the task's deadline
 * (created + SYNC_MAX_AGE_SECONDS, or TASK_MAX_AGE_SECONDS): past it the task fails with
 * `timeout` and the caller gets a 504, however the upstream behaves.
 *
 * `Idempotency-Key` works as on submits (engine/tasks/idempotency.ts): the key derives the task id,
 * so a retry with the same key and body finds the first call's task and never runs the
 * upstream again nor reserves twice. It waits for that call to end (until its deadline) and
 * answers what it ended with. The answer is always rendered from the record
 * (engine/tasks/sync-record.ts), for the first call as for its retries, so both get the same body.
 *
 * The call sends the upstream body the route holds in memory, never the recorded request, so
 * nothing stored aside at submit (engine/media/inline-inputs.ts) is read back here; the synchronous
 * routes record their inline images as short placeholders anyway (never sent again).
 */
import type { EventDataOf } from '../../domain/events.js';
import type { AppendResult, EventMetadata } from '../../ports/event-store.js';
import type { RequestDeps } from './request-deps.js';
import { Refusal } from '../../domain/refusal.js';
import { settlementOf } from '../../domain/pricing.js';
import { MAX_DOWNLOAD_BYTES } from '../media/assets.js';
import { beforeDeadline, TaskDeadlineError, taskDeadline } from './deadline.js';
import { submitIdempotently } from './idempotency.js';
import { outboundPolicy } from '../outbound/outbound-guard.js';
import { exhaustedReason, failover, failoverChannels } from '../channels/failover.js';
import { rehostCompletion, type CompletionData } from '../media/rehost.js';
import { keepingPuts } from '../media/kept-puts.js';
import { submitTask, type SubmitRequest } from './submit.js';
import { awaitSyncRecord, succeededCall, syncMaxAgeSeconds, type SucceededSyncCall } from './sync-record.js';
import { executeTask } from '../commands/task-commands.js';
import { submitContext, type UpstreamContext, type UpstreamResult } from '../channels/upstream.js';
import { nowSeconds } from '../../lib/time.js';

export interface SyncCallResult {
  results: UpstreamResult[];
  usage: { units: number; tier?: string };
  /**
   * The upstream's own answer, kept in TaskSucceeded.upstream (e.g. token usage), with what
   * the route needs to render its answer again from the record.
   */
  snapshot?: Record<string, unknown>;
}

type TaskData = EventDataOf<'TaskSubmitted'>;

export interface SyncRequest extends Omit<SubmitRequest, 'metadata' | 'taskId' | 'idempotencyKey' | 'requestHash' | 'sync'> {
  metadata: EventMetadata;
  delivery: 'url' | 'b64';
  /** The request's `Idempotency-Key`, and the body it is matched on (the decoded form for multipart). */
  idempotencyKey: string | undefined;
  body: unknown;
  /** Told the task id as soon as it is known, before any upstream work (the `x-task-id` header). */
  onTask?: (taskId: string, replayed: boolean) => void;
  /** The client went away: stops a retry's waiting for the first call (never a call itself). */
  signal?: AbortSignal;
}

export interface SyncOutcome {
  call: SucceededSyncCall;
  /** True when this request was answered from an earlier one with the same key. */
  replayed: boolean;
}

export async function runSyncTask(deps: RequestDeps, request: SyncRequest, call: (ctx: UpstreamContext) => Promise<SyncCallResult>): Promise<SyncOutcome> {
  const { delivery, body, idempotencyKey, onTask, signal, ...submit } = request;
  const outcome = await submitIdempotently(deps, { key: idempotencyKey, tokenId: request.caller.tokenId, body, metadata: request.metadata }, (ids) =>
    submitTask(deps, { ...submit, ...ids, sync: true }),
  );
  const task = outcome.task;
  // The same key and body on another route (an async submit, another family) is not this call.
  if (outcome.replayed && (task.sync !== true || task.family !== request.family)) {
    throw new Refusal('conflict', 'idempotency_key_reused', 'Idempotency-Key: this key was used with a different request', 'Idempotency-Key');
  }
  onTask?.(task.taskId, outcome.replayed);
  // The bytes this request stores itself, answered without reading them back (a replay reads them).
  const kept = new Map<string, Buffer>();
  if (!outcome.replayed) await executeSyncTask(deps, task, request.metadata, delivery, call, kept);
  const succeeded = succeededCall(deps, await awaitSyncRecord(deps, task, signal));
  return { call: kept.size > 0 ? { ...succeeded, keptBytes: kept } : succeeded, replayed: outcome.replayed };
}

/** Calls the channels in turn and records how the call ended (TaskSucceeded and settlement, or TaskFailed and release). */
async function executeSyncTask(
  deps: RequestDeps,
  task: TaskData,
  metadata: EventMetadata,
  delivery: 'url' | 'b64',
  call: (ctx: UpstreamContext) => Promise<SyncCallResult>,
  kept: Map<string, Buffer>,
): Promise<void> {
  const meta = (): EventMetadata => ({ ...metadata, at: deps.clock().toISOString(), accountId: task.accountId, correlationId: task.taskId });
  const fail = async (code: string, why: string): Promise<void> => {
    await executeTask(deps.events, task.taskId, { type: 'FailTask', data: { code, reason: why, completedAt: nowSeconds(deps.clock) } }, meta());
    await deps.accounts.execute(task.accountId, { type: 'ReleaseQuota', data: { reservationId: task.reservationId, reason: code } }, meta());
  };
  const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
  const deadline = taskDeadline(task.createdAt, syncMaxAgeSeconds(deps));
  const outcome = await failover({
    channels: failoverChannels(deps.catalog, task.channelCandidates),
    log: deps.log,
    logFields: { taskId: task.taskId },
    failedMessage: 'synchronous upstream call failed',
    health: deps.channelHealth,
    call: async ({ channel }) => {
      const ctx = submitContext(channel, deps.selfUrl(), task);
      const answer = await beforeDeadline(deadline, deps.clock(), (signal) => call({ ...ctx, signal }));
      return { answer, baseUrl: ctx.baseUrl };
    },
    recordFailure: async ({ channel, attempt }, err) => {
      await executeTask(
        deps.events,
        task.taskId,
        { type: 'RecordUpstreamSubmitFailed', data: { channelId: channel.channelId, reason: err.message, retryable: err.retryable, attempt } },
        meta(),
      );
    },
  });
  switch (outcome.kind) {
    case 'threw':
      if (outcome.error instanceof TaskDeadlineError) {
        // An upstream failure like the others (failover.ts): one warn line, its channel and reason.
        deps.log.warn({ taskId: task.taskId, channelId: outcome.channel.channelId, reason: outcome.error.message }, 'synchronous upstream call timed out');
        return fail('timeout', outcome.error.message);
      }
      deps.log.error({ err: outcome.error, taskId: task.taskId }, 'synchronous call failed');
      return fail('internal_error', message(outcome.error));
    case 'refused':
      // A refusal the client can act on (4xx) is answered 400; another final failure 502.
      return fail(outcome.failure.status !== undefined && outcome.failure.status < 500 ? 'upstream_rejected' : 'upstream_error', outcome.failure.message);
    case 'exhausted':
    case 'stopped': // only a `beforeTry` stops the loop, and a synchronous call has none
      return fail('no_channel_available', exhaustedReason(outcome.kind === 'exhausted' ? outcome.failure : undefined));
  }
  const {
    channel,
    value: { answer, baseUrl },
  } = outcome;
  const policy = outboundPolicy(deps.config, deps.selfUrl(), [baseUrl], { maxBytes: MAX_DOWNLOAD_BYTES });
  let completion: CompletionData;
  try {
    completion = await rehostCompletion(
      { assets: keepingPuts(deps.assets, kept), clock: deps.clock, assetRetentionSeconds: deps.config.assetRetentionSeconds },
      {
        task,
        channel: { key: channel.key, baseUrl },
        answer,
        delivery,
        deadline,
        policy,
      },
    );
  } catch (err) {
    return fail(err instanceof TaskDeadlineError ? 'timeout' : 'result_unavailable', message(err));
  }
  // Settled in the request so the caller's balance is right when the response arrives (the
  // settler's later pass over the same TaskSucceeded decides nothing: settlement is idempotent).
  // The settlement follows the task's end into the same group commit (one fsync for both where
  // the store commits in groups, after it on any other) and is never written without it.
  const settle = (after?: Promise<AppendResult>) =>
    deps.accounts.execute(
      task.accountId,
      { type: 'SettleQuota', data: { reservationId: task.reservationId, ...settlementOf(task.basis, answer.usage) } },
      meta(),
      after ? { after } : {},
    );
  let settling: Promise<unknown> | undefined;
  const completed = await executeTask(deps.events, task.taskId, { type: 'CompleteTask', data: completion }, meta(), undefined, (completing) => {
    settling = settle(completing);
    // Awaited below once the end is recorded; when it is not, this one failed unwritten.
    settling.catch(() => undefined);
  });
  if (completed.events.length > 0) {
    await settling;
    return;
  }
  // The end was recorded already. Only a success is settled: a task failed meanwhile (the
  // reconciler's backstop for a call whose process stopped past its deadline, when this one was
  // only frozen) has its reservation released, and the call answers that failure from the record.
  if (completed.state.status === 'succeeded') await settle();
}
