/**
 * Accepting a task: quote, reserve on the account stream, then open the task stream. Two
 * single-stream appends; when the second fails the reservation is released at once, and when
 * the process dies between them the reconciler releases it after its grace period. The task
 * stream's append follows the reservation's (AppendOptions.after): queued as soon as the
 * reservation is decided, it commits in the same group commit on the embedded store (one fsync
 * for both) and after it on any other, and is never written when the reservation is not.
 *
 * Large inline inputs (data URIs, declared raw Base64) are stored aside and recorded as
 * references (inline-inputs.ts): the recorded request is planned and its size checked before
 * anything is reserved, the inputs are stored after the reservation and before the task
 * stream is opened, and a submit that records no task deletes what it stored.
 */
import { streams, type EventDataOf } from '../../domain/events.js';
import { newTaskId } from '../../domain/ids.js';
import { quote } from '../../domain/pricing.js';
import { appendSize, MAX_APPEND_BYTES, WrongExpectedRevisionError, type AppendResult, type EventMetadata } from '../../ports/event-store.js';
import { taskDecider } from '../../domain/task.js';
import { assertTokenCovers, type Caller } from '../accounts/caller.js';
import type { RequestDeps } from './request-deps.js';
import { Refusal } from '../../domain/refusal.js';
import { appendEvents, appendSizeAtMost } from '../commands/append.js';
import { readSubmitted } from '../commands/task-commands.js';
import { discardInlineInputs, planInlineInputs, storeInlineInputs } from '../media/inline-inputs.js';

export interface SubmitRequest {
  family: string;
  /** Channel family that speaks the upstream protocol for this request. */
  channelFamily: string;
  action: string;
  model: string;
  caller: Caller;
  /** The validated request as it will be sent upstream (no secrets). */
  request: Record<string, unknown>;
  /**
   * Paths in `request` (`*`: every item of an array) that take raw Base64: stored aside like
   * data URIs when large (data URIs are found anywhere without being declared).
   */
  base64Fields?: readonly string[];
  /** What the reservation is quoted on (images asked for, seconds, requests). */
  units: number;
  tier?: string;
  extras?: readonly string[];
  callbackUrl?: string;
  idempotencyKey?: string;
  /** Hash of the request body, recorded so a retry with the same Idempotency-Key can be matched. */
  requestHash?: string;
  metadata: EventMetadata;
  /** A pre-chosen task id (idempotent submits decide it before reserving). */
  taskId?: string;
  /** Executed in the request (sync endpoints), not by the dispatcher. */
  sync?: boolean;
}

export interface SubmittedTask {
  taskId: string;
  data: EventDataOf<'TaskSubmitted'>;
  position: bigint;
  /** False when the task already existed under this id (another request with the same key opened it). */
  opened: boolean;
}

function candidateChannels(deps: RequestDeps, caller: Caller, model: string, channelFamily: string): string[] {
  const channels = deps.catalog.channelsFor(model, caller.group, channelFamily);
  const usable = caller.channelId ? channels.filter((c) => c.channelId === caller.channelId) : channels;
  if (usable.length === 0) throw new Refusal('forbidden', 'model_not_available', `model: ${model} is not available to this API key`, 'model');
  return usable.map((c) => c.channelId);
}

export async function submitTask(deps: RequestDeps, req: SubmitRequest): Promise<SubmittedTask> {
  const { caller } = req;
  const channelCandidates = candidateChannels(deps, caller, req.model, req.channelFamily);
  // A model without a price is refused (403 model_not_priced) by the quote.
  const priced = quote(deps.catalog.prices(), {
    model: req.model,
    group: caller.group,
    units: req.units,
    ...(req.tier ? { tier: req.tier } : {}),
    ...(req.extras ? { extras: req.extras } : {}),
  });
  assertTokenCovers(caller, priced.amount);

  const taskId = req.taskId ?? newTaskId();
  const reservationId = `res_${taskId}`;
  const metadata = { ...req.metadata, accountId: caller.accountId, correlationId: taskId };
  const planned = planInlineInputs(taskId, req.request, req.base64Fields);
  const data: EventDataOf<'TaskSubmitted'> = {
    taskId,
    family: req.family,
    action: req.action,
    model: req.model,
    accountId: caller.accountId,
    tokenId: caller.tokenId,
    group: caller.group,
    channelCandidates,
    request: planned.request,
    reservationId,
    reserved: priced.amount,
    basis: priced.basis,
    createdAt: Math.floor(deps.clock().getTime() / 1000),
    ...(req.callbackUrl ? { callbackUrl: req.callbackUrl } : {}),
    ...(req.idempotencyKey ? { idempotencyKey: req.idempotencyKey } : {}),
    ...(req.requestHash ? { requestHash: req.requestHash } : {}),
    ...(req.sync ? { sync: true } : {}),
  };
  // Decided on a stream that does not exist yet, and appended expecting none: if another request
  // opened it meanwhile (the same idempotency key), the append conflicts and that task is found
  // below, instead of deciding `[]` on it here.
  const opening = taskDecider.decide({ type: 'SubmitTask', data }, taskDecider.initialState());
  // Refused before anything is reserved or stored: the store would refuse the append anyway.
  // Serialised to be measured only when the bound from lengths does not already show it fits.
  const opened = opening.map((e) => ({ ...e, metadata }));
  const size = appendSizeAtMost(opened) <= MAX_APPEND_BYTES ? 0 : appendSize(opened);
  if (size > MAX_APPEND_BYTES) {
    throw new Refusal(
      'too_large',
      'request_too_large',
      `body: the request is ${size} bytes to record once inline files are stored aside; at most ${MAX_APPEND_BYTES}`,
      'body',
    );
  }
  // Async: the append is queued at once (before the first await), and an event refused by its
  // schema is a rejection like any failed append, not a throw inside the account service.
  const openTask = async (after?: Promise<AppendResult>): Promise<AppendResult> =>
    appendEvents(deps.events, streams.task(taskId), opening, {
      expectedRevision: 'no_stream',
      metadata,
      ...(after ? { after } : {}),
    });
  // Inline inputs are stored between the two appends (they must exist before the task does):
  // only requests without any follow their reservation in the same commit.
  let openingTask: Promise<AppendResult> | undefined;
  const followReservation = (reserving: Promise<AppendResult>): void => {
    openingTask = openTask(reserving);
    // Awaited below when the reservation holds; when it does not, this append failed unwritten.
    openingTask.catch(() => undefined);
  };
  // Refused by the account's decider as the client is answered: the API key's cap (403), the
  // balance (402), the tasks in flight (429).
  await deps.accounts.execute(
    caller.accountId,
    {
      type: 'ReserveQuota',
      data: {
        reservationId,
        taskId,
        amount: priced.amount,
        model: req.model,
        tokenId: caller.tokenId,
        basis: priced.basis,
        // The token's cap is enforced in the same decision as the balance, so parallel submits can not overshoot it.
        ...(caller.unlimitedQuota ? {} : { tokenQuotaLimit: caller.quotaLimit }),
        // So is the account's count of tasks in flight (its open reservations).
        ...(deps.config.maxTasksInFlightPerAccount > 0 ? { maxOpenReservations: deps.config.maxTasksInFlightPerAccount } : {}),
      },
    },
    metadata,
    planned.inputs.length === 0 ? { onAppend: followReservation } : {},
  );

  const release = () =>
    deps.accounts
      .execute(caller.accountId, { type: 'ReleaseQuota', data: { reservationId, reason: 'submit_failed' } }, metadata)
      .catch((releaseErr: unknown) => deps.log.error({ err: releaseErr, reservationId }, 'release after a failed submit failed; the reconciler will retry'));
  try {
    await storeInlineInputs(deps.assets, planned.inputs);
  } catch (err) {
    await release();
    throw err;
  }
  try {
    // Not queued when the reservation decided nothing (an idempotent retry's, already made).
    const result = await (openingTask ?? openTask());
    return { taskId, data, position: result.position, opened: true };
  } catch (err) {
    // Nothing is undone before the stream is looked at: the task may exist under this id with
    // this reservation — an idempotent retry that resumed a claim raced the request that made it
    // (WrongExpectedRevisionError), or this very append was written and only its answer was lost
    // (a connection cut after the commit). Releasing then would let the task run unpaid.
    let existing: SubmittedTask | undefined;
    try {
      existing = await existingSubmit(deps, taskId, reservationId);
    } catch (readErr) {
      // Unknown whether the task exists: leave the reservation open and the inputs stored. If
      // the task is there it runs and settles; if not, the reconciler releases the reservation
      // once its grace period has passed (reconciler.ts).
      deps.log.error({ err: readErr, taskId }, 'a submit failed and its task stream could not be read; the reconciler settles the reservation');
      throw err;
    }
    // Found after a lost answer, the task is this request's own; after a conflict, another's.
    if (existing) return { ...existing, opened: !(err instanceof WrongExpectedRevisionError) };
    // This attempt's inputs (its own nonce) belong to no task.
    await discardInlineInputs(deps.assets, planned.inputs, deps.log);
    await release();
    throw err;
  }
}

async function existingSubmit(deps: RequestDeps, taskId: string, reservationId: string): Promise<SubmittedTask | undefined> {
  const submitted = await readSubmitted(deps.events, taskId);
  return submitted?.data.reservationId === reservationId ? { taskId, data: submitted.data, position: submitted.position, opened: false } : undefined;
}
