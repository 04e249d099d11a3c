/**
 * The recorded end of a synchronous call, which its answer is rendered from. The call itself,
 * an idempotent retry of it and the owner's query by id all read the same record (the task
 * stream folded through the `sync-results` projection), so they answer the same body, or the
 * same error: a failed call is answered by the error its TaskFailed code maps to, a call whose
 * result files are deleted by 410 `result_expired`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { streams, type TaskResultItem } from '../../domain/events.js';
import { foldDocument } from '../../../projections/fold.js';
import { syncResultProjection, type SyncResultDoc } from '../../../projections/sync-result.js';
import type { RequestDeps } from './request-deps.js';
import { Refusal } from '../../domain/refusal.js';
import { taskViewFor } from './task-view.js';
import { SYNC_MAX_AGE_SECONDS, taskDeadline } from './deadline.js';
import { signAssetRefs } from '../media/sign-asset-refs.js';

export type SucceededSyncCall = SyncResultDoc & {
  status: 'succeeded';
  completedAt: number;
  /** The bytes the answering request stored itself, by asset key (kept-puts.ts); never on a replay. */
  keptBytes?: ReadonlyMap<string, Buffer>;
};

/** How often a retry looks whether the call it waits for has ended. */
export const RETRY_POLL_MS = 100;
/**
 * How long past the call's deadline a retry still waits: the call fails itself at its deadline,
 * and the record of that takes a moment. A call whose process died is failed by the reconciler.
 */
export const RETRY_GRACE_MS = 5_000;

export const syncMaxAgeSeconds = (deps: RequestDeps): number => deps.config.taskMaxAgeSeconds ?? SYNC_MAX_AGE_SECONDS;

async function readSyncRecord(deps: RequestDeps, taskId: string): Promise<SyncResultDoc | undefined> {
  return foldDocument(syncResultProjection, await deps.events.readStream(streams.task(taskId)));
}

/** The owner's record (another account's is missing): the view, or the stream while the view lags behind the call's end. */
export async function syncRecordFor(deps: RequestDeps, taskId: string, accountId: string): Promise<SyncResultDoc | undefined> {
  const doc = await taskViewFor(deps, syncResultProjection, taskId, accountId);
  if (doc?.status !== 'running') return doc;
  return readSyncRecord(deps, taskId);
}

/**
 * Waits for a call another request runs (an idempotent retry) to end, until its deadline and
 * RETRY_GRACE_MS. `signal` (the retry's client went away) stops the waiting, never the call.
 */
export async function awaitSyncRecord(deps: RequestDeps, task: { taskId: string; createdAt: number }, signal?: AbortSignal): Promise<SyncResultDoc> {
  const deadline = taskDeadline(task.createdAt, syncMaxAgeSeconds(deps));
  for (;;) {
    const doc = await readSyncRecord(deps, task.taskId);
    if (doc && doc.status !== 'running') return doc;
    const left = deadline.at + RETRY_GRACE_MS - deps.clock().getTime();
    if (left <= 0) {
      throw new Refusal('upstream_timeout', 'upstream_timeout', `the call did not finish within ${deadline.maxAgeSeconds} s; nothing is charged for it`);
    }
    try {
      await sleep(Math.min(RETRY_POLL_MS, left), undefined, signal ? { signal } : {});
    } catch {
      // Nobody reads this answer: the client is gone.
      throw new Refusal('client_gone', 'client_closed_request', 'the client closed the request');
    }
  }
}

/** The error a synchronous call answers for its TaskFailed code (the call and its replays alike). */
function syncFailureError(code: string, reason: string): Refusal {
  switch (code) {
    case 'timeout':
      return new Refusal('upstream_timeout', 'upstream_timeout', `the upstream did not answer in time: ${reason}`);
    case 'result_unavailable':
      return new Refusal('upstream_failed', 'upstream_error', `the upstream result could not be fetched: ${reason}`);
    case 'upstream_rejected':
      return new Refusal('invalid', 'upstream_rejected', reason);
    case 'internal_error':
      return new Refusal('internal', 'internal_error', 'internal error');
    default:
      // upstream_error, no_channel_available, interrupted (the reconciler's).
      return new Refusal('upstream_failed', 'upstream_error', reason);
  }
}

function expiredError(deps: RequestDeps, doc: SyncResultDoc): Refusal {
  const at = doc.assetsExpireAt ? ` at ${new Date(doc.assetsExpireAt * 1000).toISOString()}` : '';
  return new Refusal(
    'gone',
    'result_expired',
    `task ${doc.taskId}: its images were deleted${at} (results are kept ${deps.config.assetRetentionSeconds} s after the call); they are not made again`,
  );
}

/** The record of a call that succeeded and whose files are still kept, or the error to answer instead. */
export function succeededCall(deps: RequestDeps, doc: SyncResultDoc): SucceededSyncCall {
  switch (doc.status) {
    case 'succeeded': {
      const now = Math.floor(deps.clock().getTime() / 1000);
      if (doc.assetsExpireAt && now >= doc.assetsExpireAt) throw expiredError(deps, doc);
      // The answer's URLs are signed here, on this instance's base (the record keeps keys).
      return { ...signAssetRefs(doc, deps.signer, doc.taskId), status: 'succeeded', completedAt: doc.completedAt ?? doc.createdAt };
    }
    case 'expired':
      throw expiredError(deps, doc);
    case 'failed':
      throw syncFailureError(doc.failure?.code ?? 'upstream_error', doc.failure?.reason ?? 'the call failed');
    case 'running':
      throw new Refusal(
        'conflict',
        'task_in_progress',
        `id: task ${doc.taskId} is still running; query it again shortly, or retry the call with its Idempotency-Key to wait for it`,
        'id',
      );
  }
}

/** A result's bytes as Base64: those the request stored itself, else read back from the asset store (410 once they are deleted). */
export async function resultBase64(deps: RequestDeps, doc: SyncResultDoc & Pick<SucceededSyncCall, 'keptBytes'>, item: TaskResultItem): Promise<string> {
  const kept = item.assetKey ? doc.keptBytes?.get(item.assetKey) : undefined;
  if (kept) return kept.toString('base64');
  const asset = item.assetKey ? await deps.assets.get(item.assetKey) : undefined;
  if (!asset) throw expiredError(deps, doc);
  return asset.bytes.toString('base64');
}
