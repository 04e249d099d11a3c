/**
 * Dispatcher: on TaskSubmitted, submits the task upstream on the best channel; a retryable
 * failure moves on to the next candidate, a refusal fails the task, and when no channel is
 * left the task fails (the settler then releases its reservation); the fail-over loop and its
 * rules are shared with synchronous calls (failover.ts). Every submit runs under
 * the task's deadline (created + the family's max age): a submit that hangs past it, or a
 * dispatch that comes too late (a redispatch), fails the task with `timeout`.
 *
 * Inputs the submit stored aside (inline-inputs.ts) are put back into the request once,
 * before the first channel is tried, so upstream adapters only ever see the request as the
 * client sent it. A task whose inputs are gone fails with `input_unavailable`.
 *
 * Each try runs under a submit lease with a fencing token (UpstreamSubmitClaimed.epoch): its
 * outcome is recorded under that epoch, and only while that claim is the task's open one. An
 * answer whose record failed is held (submit-lease-memory.ts) and recorded by the next try of
 * the dispatch instead of a second submit; every submit carries the task's client reference
 * (`Idempotency-Key`), the same on a submit made again after memory was lost.
 */
import type { EventMetadata } from '../../ports/event-store.js';
import { InvalidTaskTransitionError, SubmitFencedError, UpstreamSubmitClaimedError, type KnownTask } from '../../domain/task.js';
import type { ChannelHealth } from '../channels/channel-health.js';
import { exhaustedReason, failover, failoverChannels, type FailoverOutcome } from '../channels/failover.js';
import { beforeDeadline, TaskDeadlineError, taskDeadline } from '../tasks/deadline.js';
import { InputUnavailableError, resolveInlineInputs } from '../media/inline-inputs.js';
import type { HeldAnswer, SubmitLeaseMemory } from './submit-lease-memory.js';
import { executeTask, readTask, type KnownTaskState } from '../commands/task-commands.js';
import { NEVER_SUBMITTED } from '../upkeep/reconciler.js';
import { submitContext, UpstreamError } from '../channels/upstream.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from '../channels/upstream-http.js';
import { nowSeconds } from '../../lib/time.js';
import type { UpstreamDeps } from '../engine-deps.js';

/**
 * How long a dispatcher's claim on submitting a task upstream holds (UpstreamSubmitClaimed): an
 * upstream submit is bounded by the upstream timeout (30 s), so a live owner always records
 * its outcome well within this, and only an owner that died (or paused) mid-submit lets the
 * lease run out. Another instance takes the claim over once it has itself watched the claim open
 * this long on its own clock (no clock is compared with another's), claims anew (the next epoch,
 * which fences the old holder's record) and submits with the same client reference. That is the
 * one window where a task can reach the upstream twice: an upstream that ignores Idempotency-Key
 * then runs it twice (logged: 'claimed again over an open claim').
 */
export const SUBMIT_LEASE_SECONDS = Math.ceil(DEFAULT_UPSTREAM_TIMEOUT_MS / 1000) + 60;

export interface DispatcherDeps extends UpstreamDeps {
  /** This instance, as the owner of its submit leases. */
  instanceId: string;
  /** Called when a task is running upstream, so the poller follows it. */
  onDispatched(task: KnownTask): void;
  /**
   * Called when another instance holds the task's submit lease: look again later, because that
   * instance may record its submit and then leave (its partitions moved here) without following it.
   * `retryInMs`: when this instance will have watched that claim open for a whole lease.
   */
  onClaimedElsewhere(taskId: string, retryInMs: number): void;
  /** This engine's memory of submit leases (answers held unrecorded, claims watched); one per engine. */
  leases: SubmitLeaseMemory;
  /**
   * Whether this instance still owns the task's partition (default: yes). Checked before each
   * upstream try: once the partition is revoked no new try starts here; the new owner goes on.
   */
  owns?(taskId: string): boolean;
  /** Circuit breakers per channel (channel-health.ts): open channels are skipped. */
  channelHealth?: ChannelHealth | undefined;
  /** Whether the task's reservation is still open on its account (checked before the first upstream try). */
  reservationOpen?(accountId: string, reservationId: string): Promise<boolean>;
}

export async function dispatchTask(deps: DispatcherDeps, taskId: string): Promise<void> {
  let known = await readTask(deps.events, taskId);
  const { state } = known;
  if (state.status === 'none' || state.sync) return;
  const meta = (): EventMetadata => ({ at: deps.clock().toISOString(), accountId: state.accountId, correlationId: taskId });
  // An earlier try of this dispatch got the upstream's answer but failed to record it: record
  // that answer, under the claim it was made under, instead of submitting again.
  const held = deps.leases.held(taskId);
  if (held) {
    if (state.status === 'submitted' && state.claim?.epoch === held.epoch) return recordAnswer(deps, taskId, held, meta(), known);
    deps.leases.release(taskId);
    if (state.channelId !== held.channelId || state.upstreamTaskId !== held.upstreamTaskId)
      orphaned(deps, taskId, held, 'its claim was replaced or the task ended');
  }
  if (state.final) return;
  if (state.status !== 'submitted') {
    deps.leases.unwatch(taskId);
    deps.onDispatched(state);
    return;
  }
  const fail = async (code: string, reason: string): Promise<void> => {
    await executeTask(deps.events, taskId, { type: 'FailTask', data: { code, reason, completedAt: nowSeconds(deps.clock) } }, meta(), known);
  };
  // A task opened after the reconciler released its reservation (its submit was frozen past the
  // grace period, then went on) would run unpaid: it fails before any upstream call. Asked only
  // before the first try: once a task exists, only its own end closes its reservation.
  if (state.attempts.length === 0 && !state.claim && deps.reservationOpen && !(await deps.reservationOpen(state.accountId, state.reservationId))) {
    return fail(NEVER_SUBMITTED, 'the task was opened after its reservation had been released');
  }
  const tried = new Set(state.attempts.map((a) => a.channelId));
  // A channel created just before the submit may not be in this process's catalog yet (another
  // instance's projector wrote it; the catalog refreshes on a timer there): look again first.
  if (state.channelCandidates.some((id) => !tried.has(id) && deps.catalog.channel(id) === undefined)) await deps.catalog.refresh();
  const usable = failoverChannels(deps.catalog, state.channelCandidates, { exclude: tried, usable: (c) => deps.upstreams.has(c.family) });
  // A claim left open (its holder died or paused, or this instance lost its memory) may have
  // reached its channel's upstream: that channel first, so the same client reference meets the
  // upstream that may already hold the job.
  const unsure = state.claim?.channelId;
  const candidates = [...usable.filter((c) => c.channelId === unsure), ...usable.filter((c) => c.channelId !== unsure)];
  let task: KnownTask = state;
  if (candidates.length > 0) {
    try {
      task = { ...state, request: await resolveInlineInputs(deps.assets, taskId, state.request) };
    } catch (err) {
      if (!(err instanceof InputUnavailableError)) throw err;
      return fail('input_unavailable', err.message);
    }
  }
  /** The epoch of the claim the current try is made under. */
  let epoch = 0;
  /**
   * The lease first, appended with the revision just read: whatever the bus says about who owns
   * the partition (kafkajs does not wait for a revoked member to finish), only the holder of
   * the lease submits this task upstream. False: this instance does not try (any more).
   */
  async function claimSubmit(channelId: string, attempt: number): Promise<boolean> {
    if (deps.owns && !deps.owns(taskId)) {
      deps.log.info({ taskId }, 'partition revoked: the next upstream try is left to its new owner');
      return false;
    }
    const nowMs = deps.clock().getTime();
    const open = known.state.status === 'none' ? null : known.state.claim;
    try {
      const takeOver = deps.leases.watchedOut(taskId, nowMs);
      const claim = { channelId, attempt, owner: deps.instanceId, leaseUntil: Math.floor(nowMs / 1000) + SUBMIT_LEASE_SECONDS };
      known = await executeTask(
        deps.events,
        taskId,
        { type: 'ClaimUpstreamSubmit', data: { ...claim, ...(takeOver === undefined ? {} : { takeOver }) } },
        meta(),
        known,
      );
      deps.leases.unwatch(taskId);
      epoch = known.state.status === 'none' ? 0 : (known.state.claim?.epoch ?? 0);
      if (open && epoch === open.epoch + 1) {
        // The documented window for a second upstream job: counted, and logged.
        deps.leases.counts.claimedOverOpen++;
        deps.log.warn(
          { taskId, channelId, epoch, previous: { owner: open.owner, epoch: open.epoch, channelId: open.channelId } },
          'claimed again over an open claim: its submit may have reached the upstream, which gets this task again with the same Idempotency-Key',
        );
      }
      return true;
    } catch (err) {
      if (err instanceof UpstreamSubmitClaimedError) {
        const retryInMs = deps.leases.watch(taskId, err.epoch, nowMs);
        deps.log.info(
          { taskId, owner: err.owner, epoch: err.epoch, leaseUntil: err.leaseUntil },
          'another instance is submitting this task; looking again shortly',
        );
        deps.onClaimedElsewhere(taskId, retryInMs);
        return false;
      }
      if (!(err instanceof InvalidTaskTransitionError)) throw err;
      // Dispatched (or ended) meanwhile by another instance: follow what it recorded.
      await followRecorded(deps, taskId);
      return false;
    }
  }

  let outcome: FailoverOutcome<{ upstreamTaskId: string }>;
  try {
    outcome = await failover({
      channels: candidates,
      attemptsBefore: state.attempts.length,
      log: deps.log,
      logFields: { taskId },
      failedMessage: 'upstream submit failed',
      health: deps.channelHealth,
      beforeTry: ({ channel, attempt }) => claimSubmit(channel.channelId, attempt),
      call: ({ channel }) => {
        const adapter = deps.upstreams.get(channel.family)!;
        const deadline = taskDeadline(state.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds);
        const ctx = submitContext(channel, deps.selfUrl(), task);
        return beforeDeadline(deadline, deps.clock(), (signal) => submitted(adapter.submit({ ...ctx, signal })));
      },
      recordFailure: async ({ channel, attempt }, err) => {
        known = await executeTask(
          deps.events,
          taskId,
          { type: 'RecordUpstreamSubmitFailed', data: { channelId: channel.channelId, reason: err.message, retryable: err.retryable, attempt, epoch } },
          meta(),
          known,
        );
      },
    });
  } catch (err) {
    if (!(err instanceof SubmitFencedError)) throw err;
    // A failure made under a claim that was replaced meanwhile (this instance paused past its
    // lease): the new holder goes on with the task; nothing of this try is recorded.
    deps.log.info({ taskId, epoch: err.epoch }, 'submit lease lost before the failure was recorded; the new holder goes on');
    return followRecorded(deps, taskId);
  }
  switch (outcome.kind) {
    case 'stopped':
      return;
    case 'succeeded': {
      const answer: HeldAnswer = { epoch, channelId: outcome.channel.channelId, attempt: outcome.attempt, upstreamTaskId: outcome.value.upstreamTaskId };
      // Held until recorded: if the record fails, the dispatch's next try records this answer.
      deps.leases.hold(taskId, answer);
      return recordAnswer(deps, taskId, answer, meta(), known);
    }
    case 'threw':
      // Whatever the upstream does with a submit still under way, this task is over.
      if (outcome.error instanceof TaskDeadlineError) return fail('timeout', outcome.error.message);
      throw outcome.error;
    case 'refused':
      return fail('upstream_rejected', outcome.failure.message);
    case 'exhausted':
      return fail('no_channel_available', exhaustedReason(outcome.failure));
  }
}

/**
 * Records the upstream's answer under the claim it was made under. A store failure leaves the
 * answer held (the dispatch's next try records it); a claim replaced meanwhile, or a task that
 * ended, fences it: the upstream job is orphaned, logged, and the task follows what was recorded.
 */
async function recordAnswer(deps: DispatcherDeps, taskId: string, answer: HeldAnswer, metadata: EventMetadata, known: KnownTaskState): Promise<void> {
  const { epoch, channelId, upstreamTaskId, attempt } = answer;
  try {
    const result = await executeTask(
      deps.events,
      taskId,
      { type: 'RecordUpstreamSubmitted', data: { channelId, upstreamTaskId, attempt, epoch } },
      metadata,
      known,
    );
    deps.leases.release(taskId);
    if (result.state.status !== 'none') deps.onDispatched(result.state);
  } catch (err) {
    if (!(err instanceof SubmitFencedError) && !(err instanceof InvalidTaskTransitionError)) throw err;
    deps.leases.release(taskId);
    orphaned(deps, taskId, answer, err.message);
    await followRecorded(deps, taskId);
  }
}

/**
 * An upstream job this instance got and may not record (a paused ex-holder, fenced): it is not
 * the task's, and nothing stops it upstream (no family has a cancel). Counted, and logged.
 */
function orphaned(deps: DispatcherDeps, taskId: string, answer: HeldAnswer, why: string): void {
  deps.leases.counts.orphaned++;
  deps.log.warn({ taskId, ...answer, why }, 'upstream job orphaned: its submit lease was lost before it was recorded');
}

/**
 * Another instance moved the task on: follow what it recorded, unless the task has ended. A task
 * whose new claim's holder is still submitting is looked at again, as when a claim is refused.
 */
async function followRecorded(deps: DispatcherDeps, taskId: string): Promise<void> {
  const { state } = await readTask(deps.events, taskId);
  if (state.status === 'none' || state.final) return;
  if (state.status !== 'submitted') return deps.onDispatched(state);
  if (state.claim) deps.onClaimedElsewhere(taskId, deps.leases.watch(taskId, state.claim.epoch, deps.clock().getTime()));
}

/**
 * An adapter that throws anything but an UpstreamError while reading an upstream's answer
 * (garbage it did not expect) has met a misbehaving upstream: that is a retryable failure of
 * this channel, not of the gateway.
 */
async function submitted<T>(submit: Promise<T>): Promise<T> {
  try {
    return await submit;
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError(`submit: the upstream answer could not be read: ${err instanceof Error ? err.message : String(err)}`, true);
  }
}
