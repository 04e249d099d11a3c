/**
 * Synchronous calls are tasks too: the request, its reservation and its settlement are events
 * in a task stream, so auditors see them like any task; only the client waits. The upstream
 * call runs in the request; a client that disconnects does not stop it, so the reservation is
 * always settled or released. The calls and the re-hosting run under the task's deadline
 * (created + SYNC_MAX_AGE_SECONDS, or TASK_MAX_AGE_SECONDS): past it the task fails with
 * `timeout` and the caller gets a 504, however the upstream behaves.
 */
import type { EventMetadata } from '../ports/event-store.js';
import type { GatewayDeps } from '../http/deps.js';
import { GatewayError } from '../http/errors.js';
import type { TaskResultItem } from '../domain/events.js';
import { settlementOf } from '../domain/pricing.js';
import { channelRehostDeps, MAX_DOWNLOAD_BYTES, rehostResults, resultLimitOf } from './assets.js';
import { beforeDeadline, SYNC_MAX_AGE_SECONDS, TaskDeadlineError, taskDeadline } from './deadline.js';
import { outboundPolicy } from './outbound-guard.js';
import { orderChannels } from './channel-order.js';
import { submitTask, type SubmitRequest, type SubmittedTask } from './submit.js';
import { executeTask } from './task-commands.js';
import { resolveBaseUrl, UpstreamError, upstreamModelOf, type UpstreamContext, type UpstreamResult } from './upstream.js';

export interface SyncCallResult {
  results: UpstreamResult[];
  usage: { units: number; tier?: string };
  /** The upstream's own answer, kept in TaskSucceeded.upstream (e.g. token usage). */
  snapshot?: Record<string, unknown>;
}


export interface SyncOutcome {
  task: SubmittedTask;
  results: TaskResultItem[];
  snapshot: Record<string, unknown> | undefined;
  assetsExpireAt: number;
}

export async function runSyncTask(
  deps: GatewayDeps,
  request: Omit<SubmitRequest, 'metadata'> & { metadata: EventMetadata; delivery: 'url' | 'b64' },
  call: (ctx: UpstreamContext) => Promise<SyncCallResult>,
): Promise<SyncOutcome> {
  const task = await submitTask(deps, { ...request, sync: true });
  const meta = (): EventMetadata => ({ ...request.metadata, at: deps.clock().toISOString(), accountId: task.data.accountId, correlationId: task.taskId });
  const nowSeconds = () => Math.floor(deps.clock().getTime() / 1000);
  const deadline = taskDeadline(task.data.createdAt, deps.config.taskMaxAgeSeconds ?? SYNC_MAX_AGE_SECONDS);
  const channels = orderChannels(task.data.channelCandidates.map((id) => deps.catalog.channel(id)).filter((c): c is NonNullable<typeof c> => c !== undefined && c.status === 1));
  let failure: UpstreamError | undefined;
  let attempt = 0;
  for (const channel of channels) {
    attempt++;
    const baseUrl = resolveBaseUrl(channel.baseUrl, deps.selfUrl());
    let answer: SyncCallResult;
    try {
      answer = await beforeDeadline(deadline, deps.clock(), (signal) => call({ channel, baseUrl, upstreamModel: upstreamModelOf(channel, task.data.model), task: task.data, signal }));
    } catch (err) {
      if (err instanceof TaskDeadlineError) throw await timedOut(err);
      if (!(err instanceof UpstreamError)) {
        await fail(task, 'internal_error', err instanceof Error ? err.message : String(err));
        throw err;
      }
      failure = err;
      await executeTask(deps.events, task.taskId, { type: 'RecordUpstreamSubmitFailed', data: { channelId: channel.channelId, reason: err.message, retryable: err.retryable, attempt } }, meta());
      if (!err.retryable) break;
      continue;
    }
    const assetsExpireAt = nowSeconds() + deps.config.assetRetentionSeconds;
    let results: TaskResultItem[];
    const policy = outboundPolicy(deps.config, deps.selfUrl(), [baseUrl], { maxBytes: MAX_DOWNLOAD_BYTES });
    try {
      results = await beforeDeadline(deadline, deps.clock(), (signal) =>
        rehostResults(
          channelRehostDeps(deps, { key: channel.key, baseUrl }, policy, signal),
          task.taskId,
          answer.results,
          request.delivery,
          assetsExpireAt,
          resultLimitOf(task.data.basis),
        ),
      );
    } catch (err) {
      if (err instanceof TaskDeadlineError) throw await timedOut(err);
      await fail(task, 'result_unavailable', err instanceof Error ? err.message : String(err));
      throw new GatewayError(502, 'upstream_error', `the upstream result could not be fetched: ${err instanceof Error ? err.message : String(err)}`);
    }
    await executeTask(deps.events, task.taskId, {
      type: 'CompleteTask',
      data: { results, usage: answer.usage, ...(answer.snapshot ? { upstream: answer.snapshot } : {}), assetsExpireAt: results.some((r) => r.assetKey) ? assetsExpireAt : 0, completedAt: nowSeconds() },
    }, meta());
    // Settle now so the caller's balance is right when the response arrives; the settler's
    // later pass over the same TaskSucceeded decides nothing (settlement is idempotent).
    const settlement = settlementOf(task.data.basis, answer.usage);
    await deps.accounts.execute(task.data.accountId, { type: 'SettleQuota', data: { reservationId: task.data.reservationId, ...settlement } }, meta());
    return { task, results, snapshot: answer.snapshot, assetsExpireAt };
  }
  const reason = failure?.message ?? 'no enabled channel serves this model';
  await fail(task, failure && !failure.retryable ? 'upstream_rejected' : 'no_channel_available', reason);
  if (failure && !failure.retryable && failure.status !== undefined && failure.status < 500) {
    throw new GatewayError(400, 'upstream_rejected', reason);
  }
  throw new GatewayError(502, 'upstream_error', reason);

  /** The task ran out of time: failed, released, and a 504 for the caller. */
  async function timedOut(err: TaskDeadlineError): Promise<GatewayError> {
    await fail(task, 'timeout', err.message);
    return new GatewayError(504, 'upstream_timeout', `the upstream did not answer in time: ${err.message}`);
  }

  async function fail(t: SubmittedTask, code: string, why: string): Promise<void> {
    await executeTask(deps.events, t.taskId, { type: 'FailTask', data: { code, reason: why, completedAt: nowSeconds() } }, meta());
    await deps.accounts.execute(t.data.accountId, { type: 'ReleaseQuota', data: { reservationId: t.data.reservationId, reason: code } }, meta());
  }
}
