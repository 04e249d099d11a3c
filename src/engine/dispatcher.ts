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
 */
import type { Logger } from 'pino';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventMetadata, EventStore } from '../ports/event-store.js';
import { InvalidTaskTransitionError, UpstreamSubmitClaimedError, type KnownTask } from '../domain/task.js';
import type { Catalog } from './catalog.js';
import type { ChannelHealth } from './channel-health.js';
import { exhaustedReason, failover, failoverChannels } from './failover.js';
import { beforeDeadline, TaskDeadlineError, taskDeadline } from './deadline.js';
import { InputUnavailableError, resolveInlineInputs } from './inline-inputs.js';
import { executeTask, readTask } from './task-commands.js';
import { resolveBaseUrl, UpstreamError, upstreamModelOf, type UpstreamRegistry } from './upstream.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from './upstream-http.js';

/**
 * How long a dispatcher's claim on submitting a task upstream holds (UpstreamSubmitClaimed): an
 * upstream submit is bounded by the upstream timeout (30 s), so a live owner always records
 * its outcome well within this, and only an owner that died mid-submit lets the lease run out;
 * then the task's new owner (the redispatcher, a minute after submit) may claim and submit
 * again. That is the one window where a task can reach the upstream twice.
 */
export const SUBMIT_LEASE_SECONDS = Math.ceil(DEFAULT_UPSTREAM_TIMEOUT_MS / 1000) + 60;

export interface DispatcherDeps {
  events: EventStore;
  /** Where the submit stored the task's large inline inputs. */
  assets: AssetStore;
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  log: Logger;
  selfUrl: () => string;
  clock: () => Date;
  /** This instance, as the owner of its submit leases. */
  instanceId: string;
  /** Overrides every family's maximum task age (TASK_MAX_AGE_SECONDS). */
  maxAgeSeconds?: number;
  /** Called when a task is running upstream, so the poller follows it. */
  onDispatched(task: KnownTask, revision: number): void;
  /**
   * Called when another instance holds the task's submit lease: look again later, because that
   * instance may record its submit and then leave (its partitions moved here) without following it.
   */
  onClaimedElsewhere(taskId: string, leaseUntil: number): void;
  /**
   * Whether this instance still owns the task's partition (default: yes). Checked before each
   * upstream try: once the partition is revoked no new try starts here; the new owner goes on.
   */
  owns?(taskId: string): boolean;
  /** Circuit breakers per channel (channel-health.ts): open channels are skipped. */
  channelHealth?: ChannelHealth | undefined;
}

const nowSeconds = (clock: () => Date) => Math.floor(clock().getTime() / 1000);

export async function dispatchTask(deps: DispatcherDeps, taskId: string): Promise<void> {
  let known = await readTask(deps.events, taskId);
  const { state } = known;
  if (state.status === 'none' || state.final || state.sync) return;
  if (state.status !== 'submitted') {
    deps.onDispatched(state, known.revision);
    return;
  }
  const meta = (): EventMetadata => ({ at: deps.clock().toISOString(), accountId: state.accountId, correlationId: taskId });
  const tried = new Set(state.attempts.map((a) => a.channelId));
  // A channel created just before the submit may not be in this process's catalog yet (another
  // instance's projector wrote it; the catalog refreshes on a timer there): look again first.
  if (state.channelCandidates.some((id) => !tried.has(id) && deps.catalog.channel(id) === undefined)) await deps.catalog.refresh();
  const candidates = failoverChannels(deps.catalog, state.channelCandidates, { exclude: tried, usable: (c) => deps.upstreams.has(c.family) });
  const fail = async (code: string, reason: string): Promise<void> => {
    await executeTask(deps.events, taskId, { type: 'FailTask', data: { code, reason, completedAt: nowSeconds(deps.clock) } }, meta(), known);
  };
  let task: KnownTask = state;
  if (candidates.length > 0) {
    try {
      task = { ...state, request: await resolveInlineInputs(deps.assets, taskId, state.request) };
    } catch (err) {
      if (!(err instanceof InputUnavailableError)) throw err;
      return fail('input_unavailable', err.message);
    }
  }
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
    try {
      const now = nowSeconds(deps.clock);
      const claim = { channelId, attempt, owner: deps.instanceId, leaseUntil: now + SUBMIT_LEASE_SECONDS, at: now };
      known = await executeTask(deps.events, taskId, { type: 'ClaimUpstreamSubmit', data: claim }, meta(), known);
      return true;
    } catch (err) {
      if (err instanceof UpstreamSubmitClaimedError) {
        deps.log.info({ taskId, owner: err.owner, leaseUntil: err.leaseUntil }, 'another instance is submitting this task; looking again shortly');
        deps.onClaimedElsewhere(taskId, err.leaseUntil);
        return false;
      }
      if (!(err instanceof InvalidTaskTransitionError)) throw err;
      // Dispatched (or ended) meanwhile by another instance: follow what it recorded.
      await followRecorded(deps, taskId);
      return false;
    }
  }

  async function recordSubmitted(channelId: string, upstreamTaskId: string, attempt: number): Promise<void> {
    try {
      const result = await executeTask(deps.events, taskId, { type: 'RecordUpstreamSubmitted', data: { channelId, upstreamTaskId, attempt } }, meta(), known);
      if (result.state.status !== 'none') deps.onDispatched(result.state, result.revision);
    } catch (err) {
      if (!(err instanceof InvalidTaskTransitionError)) throw err;
      // Another instance dispatched it meanwhile (ownership moved mid-dispatch): follow the
      // upstream task it recorded; ours is abandoned (at-least-once towards the upstream).
      await followRecorded(deps, taskId);
    }
  }

  const outcome = await failover({
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
      const ctx = { channel, baseUrl: resolveBaseUrl(channel.baseUrl, deps.selfUrl()), upstreamModel: upstreamModelOf(channel, state.model), task };
      return beforeDeadline(deadline, deps.clock(), (signal) => submitted(adapter.submit({ ...ctx, signal })));
    },
    recordFailure: async ({ channel, attempt }, err) => {
      known = await executeTask(
        deps.events,
        taskId,
        { type: 'RecordUpstreamSubmitFailed', data: { channelId: channel.channelId, reason: err.message, retryable: err.retryable, attempt } },
        meta(),
        known,
      );
    },
  });
  switch (outcome.kind) {
    case 'stopped':
      return;
    case 'succeeded':
      return recordSubmitted(outcome.channel.channelId, outcome.value.upstreamTaskId, outcome.attempt);
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

/** Another instance moved the task on: follow what it recorded, unless the task has ended. */
async function followRecorded(deps: DispatcherDeps, taskId: string): Promise<void> {
  const current = await readTask(deps.events, taskId);
  if (current.state.status !== 'none' && !current.state.final) deps.onDispatched(current.state, current.revision);
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
