/**
 * Poller: follows every task that runs upstream. Polls on the family's interval, backs off
 * exponentially with jitter on errors, limits polls in flight per channel, appends only
 * changes, re-hosts results on success, and fails a task at its deadline (created + the
 * family's max age): the next poll is never scheduled past it, and a poll or a re-hosting
 * still running then is abandoned (its signal aborts), whatever the upstream does.
 * The in-flight set is rebuilt from the `inflight` view on start.
 */
import type { Logger } from 'pino';
import type { KnownTask } from '../../domain/task.js';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { isPermanentRehostFailure } from '../media/assets.js';
import { remainingMs, TaskDeadlineError, taskDeadline, type TaskDeadline } from '../tasks/deadline.js';
import type { OutboundPolicy } from '../outbound/outbound-guard.js';
import type { Catalog } from '../channels/catalog.js';
import { rehostCompletion, type CompletionData } from '../media/rehost.js';
import { ChannelSlots } from '../channels/channel-slots.js';
import { TimerSchedule, type Schedulable } from './timer-schedule.js';
import { backoffDelay } from '../../lib/backoff.js';
import { executeTask, readTask } from '../commands/task-commands.js';
import { resolveBaseUrl, upstreamModelOf, type UpstreamRegistry, type UpstreamStatus } from '../channels/upstream.js';
import { nowSeconds } from '../../lib/time.js';

export interface PollerDeps {
  events: EventStore;
  assets: AssetStore;
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  log: Logger;
  selfUrl: () => string;
  clock: () => Date;
  assetRetentionSeconds: number;
  pollIntervalMs?: number;
  maxAgeSeconds?: number;
  channelConcurrency: number;
  /** The outbound URL policy for result downloads from a channel (its origin is trusted). */
  outbound: (channelBaseUrl: string) => OutboundPolicy;
}

/**
 * A task followed: what polling it needs and where it is in its round, nothing else. Its
 * timing lives in the poller's one schedule (`dueAt`, `heapIndex`), a poll waiting for a slot
 * of its channel is a reference in that channel's queue, and an abort controller exists only
 * while an upstream call of the task runs (at most the channel's concurrency at once), so a
 * task between polls holds no timer, promise or signal.
 */
interface Tracked extends Schedulable {
  task: KnownTask;
  /** Revision of the task stream as last seen (saves a read per change). */
  revision: number | undefined;
  errors: number;
  /** Polls that answered so far: the interval grows with them (see `nextPollIn`). */
  polls: number;
  /**
   * - `waiting`: scheduled for its next poll;
   * - `queued`: due, waiting for a slot of its channel (scheduled at its deadline);
   * - `calling`: its upstream poll runs (scheduled at its deadline, which aborts the call);
   * - `recording`: appending what the poll found, or re-hosting results (not scheduled).
   */
  phase: 'waiting' | 'queued' | 'calling' | 'recording';
  /** The upstream call under way (a poll or the re-hosting of results), aborted when the task is untracked or the poller stops. */
  call?: AbortController;
}

/** The first poll after dispatch, doubled after each answer up to the family's interval. */
export const FIRST_POLL_MS = 250;

export interface Poller {
  track(task: KnownTask, revision?: number): void;
  /**
   * Stops following the tasks that match (their partition moved to another instance): a poll or
   * re-hosting of theirs under way is aborted, and records nothing.
   */
  untrackWhere(matches: (taskId: string) => boolean): void;
  size(): number;
  /** When a poll last got an answer from an upstream. */
  lastPoll(): Date | undefined;
  stop(): Promise<void>;
}

export function createPoller(deps: PollerDeps): Poller {
  const tracked = new Map<string, Tracked>();
  /** Steps under way (polls, appends, re-hosting, time-outs): a stop waits for them. */
  const running = new Set<Promise<void>>();
  let stopped = false;
  let lastPoll: Date | undefined;

  const timers = new TimerSchedule<Tracked>((entry) => onDue(entry));
  const slots = new ChannelSlots<Tracked>(deps.channelConcurrency, (entry) => startPoll(entry));

  const meta = (t: KnownTask): EventMetadata => ({ at: deps.clock().toISOString(), accountId: t.accountId, correlationId: t.taskId });

  /** Still this poller's to follow (not untracked since, nor tracked again as a new entry). */
  const followed = (entry: Tracked) => tracked.get(entry.task.taskId) === entry;

  /** Runs a step of the entry in the background; an error nothing expected backs the task off. */
  function inBackground(entry: Tracked, step: () => Promise<void>): void {
    const p = step().catch((err: unknown) => {
      deps.log.error({ err, taskId: entry.task.taskId }, 'poll failed unexpectedly');
      entry.errors++;
      schedule(entry, backoff(entry));
    });
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  /** Its time came: the next poll, or (queued or calling) its deadline. */
  function onDue(entry: Tracked): void {
    if (stopped || !followed(entry)) return;
    if (entry.phase === 'waiting') beginPoll(entry);
    else if (entry.phase === 'queued') {
      slots.remove(entry.task.channelId!, entry);
      entry.phase = 'recording';
      inBackground(entry, () => timeOut(entry, deadlineOf(entry.task)!));
    } else if (entry.phase === 'calling') {
      // The call stops being waited for at once (untilAborted), whatever the upstream does.
      entry.call?.abort(new TaskDeadlineError(deadlineOf(entry.task)!.maxAgeSeconds));
    }
  }

  function schedule(entry: Tracked, delayMs: number): void {
    if (stopped || !followed(entry)) return;
    // Never past the deadline: the poll at the deadline fails the task.
    const deadline = deadlineOf(entry.task);
    const delay = deadline ? Math.min(delayMs, remainingMs(deadline, deps.clock())) : delayMs;
    entry.phase = 'waiting';
    timers.schedule(entry, delay);
  }

  /** When the task must have ended; undefined while its channel or family is unknown. */
  function deadlineOf(task: KnownTask): TaskDeadline | undefined {
    const channel = task.channelId ? deps.catalog.channel(task.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    return adapter ? taskDeadline(task.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds) : undefined;
  }

  async function timeOut(entry: Tracked, deadline: TaskDeadline): Promise<void> {
    const t = entry.task;
    await executeTask(
      deps.events,
      t.taskId,
      { type: 'FailTask', data: { code: 'timeout', reason: `no result within ${deadline.maxAgeSeconds} s`, completedAt: nowSeconds(deps.clock) } },
      meta(t),
    );
    tracked.delete(t.taskId);
  }

  function intervalOf(task: KnownTask): number {
    const channel = task.channelId ? deps.catalog.channel(task.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    return deps.pollIntervalMs ?? adapter?.pollIntervalMs ?? 2000;
  }

  /**
   * Soon after dispatch, then backing off to the family's interval: a fast upstream is seen
   * fast (a video finished in 2 s is not shown running for the family's 5 s interval), and a
   * long task costs no more polls than before once the interval is reached.
   */
  function nextPollIn(entry: Tracked): number {
    return Math.min(intervalOf(entry.task), FIRST_POLL_MS * 2 ** entry.polls);
  }

  /** After errors: the interval doubling with each error in a row, capped at a minute, with equal jitter. */
  function backoff(entry: Tracked): number {
    return backoffDelay({ initialMs: intervalOf(entry.task), maxMs: 60_000, jitter: 'equal' }, entry.errors);
  }

  /**
   * One upstream call of the entry (a poll, or the re-hosting of results) with an abort
   * controller that exists only while it runs: aborted when the task is untracked, the poller
   * stops or (a poll) the deadline comes; re-hosting has its own deadline (rehostCompletion).
   */
  async function asCall<T>(entry: Tracked, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const call = new AbortController();
    entry.call = call;
    try {
      return await run(call.signal);
    } finally {
      if (entry.call === call) entry.call = undefined;
    }
  }

  async function finish(entry: Tracked, status: UpstreamStatus, deadline?: TaskDeadline): Promise<void> {
    const t = entry.task;
    const known = entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision };
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
        if (!followed(entry)) return;
        if (err instanceof TaskDeadlineError || !isPermanentRehostFailure(err)) throw err;
        const reason = `the result could not be stored: ${err instanceof Error ? err.message : String(err)}`;
        await executeTask(
          deps.events,
          t.taskId,
          { type: 'FailTask', data: { code: 'result_unavailable', reason, completedAt: nowSeconds(deps.clock) } },
          meta(t),
          known,
        );
        tracked.delete(t.taskId);
        return;
      }
      // Revoked while re-hosting: the partition's new owner completes the task.
      if (!followed(entry)) return;
      await executeTask(deps.events, t.taskId, { type: 'CompleteTask', data: completion }, meta(t), known);
    } else if (status.state === 'failed') {
      await executeTask(
        deps.events,
        t.taskId,
        { type: 'FailTask', data: { code: status.code, reason: status.reason, completedAt: nowSeconds(deps.clock) } },
        meta(t),
        known,
      );
    } else if (status.state === 'lost') {
      await executeTask(
        deps.events,
        t.taskId,
        { type: 'FailTask', data: { code: 'upstream_task_lost', reason: status.reason, completedAt: nowSeconds(deps.clock) } },
        meta(t),
        known,
      );
    }
    tracked.delete(t.taskId);
  }

  /** Due: a task whose channel is gone is lost, one past its deadline times out, the others queue for a slot of their channel. */
  function beginPoll(entry: Tracked): void {
    const t = entry.task;
    const channel = t.channelId ? deps.catalog.channel(t.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    entry.phase = 'recording';
    if (!channel || !adapter || !t.upstreamTaskId) {
      inBackground(entry, () => finish(entry, { state: 'lost', reason: `channel ${t.channelId} is gone` }));
      return;
    }
    const deadline = taskDeadline(t.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds);
    const left = remainingMs(deadline, deps.clock());
    if (left <= 0) {
      inBackground(entry, () => timeOut(entry, deadline));
      return;
    }
    // Waiting for a slot and then calling, the task still fails at its deadline (onDue).
    entry.phase = 'queued';
    timers.schedule(entry, left);
    slots.enqueue(channel.channelId, entry);
  }

  /** The poll's outcome is being recorded: its deadline (scheduled while queued or calling) no longer applies. */
  function toRecording(entry: Tracked): void {
    timers.remove(entry);
    entry.phase = 'recording';
  }

  /** A slot of its channel is the entry's: the upstream poll starts. */
  function startPoll(entry: Tracked): void {
    entry.phase = 'calling';
    inBackground(entry, () => pollOnce(entry));
  }

  async function pollOnce(entry: Tracked): Promise<void> {
    const t = entry.task;
    const channelId = t.channelId!;
    const channel = deps.catalog.channel(channelId);
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    if (stopped || !followed(entry) || !channel || !adapter) {
      slots.release(channelId);
      toRecording(entry);
      // The channel went while the poll waited for its slot.
      if (!stopped && followed(entry)) await finish(entry, { state: 'lost', reason: `channel ${t.channelId} is gone` });
      return;
    }
    const deadline = taskDeadline(t.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds);
    if (remainingMs(deadline, deps.clock()) <= 0) {
      slots.release(channelId);
      toRecording(entry);
      await timeOut(entry, deadline);
      return;
    }
    let status: UpstreamStatus;
    try {
      status = await asCall(entry, (signal) =>
        untilAborted(
          callHoldingSlot(channelId, () =>
            adapter.poll({
              channel,
              baseUrl: resolveBaseUrl(channel.baseUrl, deps.selfUrl()),
              upstreamModel: upstreamModelOf(channel, t.model),
              task: t,
              upstreamTaskId: t.upstreamTaskId!,
              signal,
            }),
          ),
          signal,
        ),
      );
    } catch (err) {
      // Revoked mid-poll (the abort is the likely error): the partition's new owner polls it.
      // Stopped mid-poll: nothing is recorded, the next start adopts the task.
      if (stopped || !followed(entry)) return;
      toRecording(entry);
      await timeOutOrBackOff(entry, deadline, err, 'poll error; backing off');
      return;
    }
    if (!followed(entry)) return;
    toRecording(entry);
    entry.errors = 0;
    lastPoll = new Date();
    if (status.state === 'queued' || status.state === 'in_progress') {
      const result = await executeTask(
        deps.events,
        t.taskId,
        {
          type: 'RecordProgress',
          data: {
            status: status.state,
            progress: Math.max(0, Math.min(100, Math.round(status.progress))),
            ...(status.snapshot ? { upstream: status.snapshot } : {}),
          },
        },
        meta(t),
        entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision },
      );
      if (result.state.status !== 'none') entry.task = result.state;
      entry.revision = result.revision;
      if (result.state.final) {
        tracked.delete(t.taskId);
        return;
      }
      entry.polls++;
      schedule(entry, nextPollIn(entry));
      return;
    }
    try {
      await finish(entry, status, deadline);
    } catch (err) {
      // Re-hosting failed in a way another try may mend (a timeout, a 5xx): poll again.
      await timeOutOrBackOff(entry, deadline, err, 're-hosting failed; backing off');
    }
  }

  /**
   * The upstream call, its channel's slot held until the call itself settles (not merely until
   * the poller stops waiting for it), as the semaphore did; a stop waits for it too.
   */
  function callHoldingSlot<T>(channelId: string, call: () => Promise<T>): Promise<T> {
    // Called at once; a synchronous throw becomes the call's rejection.
    const work = (async () => call())();
    const settled = work.then(
      () => slots.release(channelId),
      () => slots.release(channelId),
    );
    running.add(settled);
    void settled.finally(() => running.delete(settled));
    return work;
  }

  /** A failed step: past the deadline the task times out, otherwise it is tried again later. */
  async function timeOutOrBackOff(entry: Tracked, deadline: TaskDeadline, err: unknown, what: string): Promise<void> {
    if (err instanceof TaskDeadlineError) {
      await timeOut(entry, deadline);
      return;
    }
    entry.errors++;
    deps.log.warn({ taskId: entry.task.taskId, errors: entry.errors, reason: err instanceof Error ? err.message : String(err) }, what);
    schedule(entry, backoff(entry));
  }

  /** Stops following the entry: out of the schedule and its channel's queue, its call aborted. */
  function drop(entry: Tracked, why: string): void {
    timers.remove(entry);
    if (entry.phase === 'queued') slots.remove(entry.task.channelId!, entry);
    entry.call?.abort(new Error(why));
  }

  return {
    track(task, revision) {
      if (stopped || task.final || tracked.has(task.taskId)) return;
      const entry: Tracked = { task, revision, errors: 0, polls: 0, phase: 'waiting', dueAt: 0, heapIndex: -1 };
      tracked.set(task.taskId, entry);
      schedule(entry, nextPollIn(entry));
    },
    untrackWhere(matches) {
      for (const [taskId, entry] of tracked) {
        if (!matches(taskId)) continue;
        tracked.delete(taskId);
        drop(entry, "the task's partition moved to another instance");
      }
    },
    size: () => tracked.size,
    lastPoll: () => lastPoll,
    async stop() {
      stopped = true;
      timers.clear();
      slots.clearWaiting();
      // A call under way records nothing once stopped: end it rather than wait for the upstream.
      for (const entry of tracked.values()) entry.call?.abort(new Error('the poller is stopping'));
      await Promise.allSettled([...running]);
    },
  };
}

/**
 * The work's outcome, or the signal's reason as soon as it aborts: the poller stops waiting for
 * an upstream that ignores its signal (at the deadline, on a revoke or a stop).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Loads a task's current state for tracking (used when rebuilding the in-flight set). */
export async function loadTracked(events: EventStore, taskId: string): Promise<KnownTask | undefined> {
  const { state } = await readTask(events, taskId);
  return state.status === 'none' || state.final ? undefined : state;
}
