/**
 * Poller: follows every task that runs upstream. Polls on the family's interval, backs off
 * exponentially with jitter on errors, limits polls in flight per channel, appends only
 * changes, re-hosts results on success, and fails a task at its deadline (created + the
 * family's max age): the next poll is never scheduled past it, and a poll or a re-hosting
 * still running then is abandoned (its signal aborts), whatever the upstream does.
 * The in-flight set is rebuilt from the `inflight` view on start.
 */
import type { Logger } from 'pino';
import type { KnownTask } from '../domain/task.js';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventMetadata, EventStore } from '../ports/event-store.js';
import { isPermanentRehostFailure } from './assets.js';
import { beforeDeadline, remainingMs, TaskDeadlineError, taskDeadline, type TaskDeadline } from './deadline.js';
import type { OutboundPolicy } from './outbound-guard.js';
import type { Catalog } from './catalog.js';
import { rehostCompletion, type CompletionData } from './rehost.js';
import { Semaphore } from './semaphore.js';
import { backoffDelay } from '../lib/backoff.js';
import { executeTask, readTask } from './task-commands.js';
import { resolveBaseUrl, upstreamModelOf, type UpstreamRegistry, type UpstreamStatus } from './upstream.js';

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

interface Tracked {
  task: KnownTask;
  /** Revision of the task stream as last seen (saves a read per change). */
  revision: number | undefined;
  errors: number;
  /** Polls that answered so far: the interval grows with them (see `nextPollIn`). */
  polls: number;
  timer?: NodeJS.Timeout;
  /**
   * The upstream call under way (a poll or the re-hosting of results), aborted when the task is
   * untracked (its partition moved). Only while a call runs: a controller per task in flight,
   * held for its whole life, would cost memory at 100,000 tasks.
   */
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
  const limits = new Map<string, Semaphore>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let lastPoll: Date | undefined;

  const limitOf = (channelId: string) => {
    let s = limits.get(channelId);
    if (!s) limits.set(channelId, (s = new Semaphore(deps.channelConcurrency)));
    return s;
  };
  const nowSeconds = () => Math.floor(deps.clock().getTime() / 1000);
  const meta = (t: KnownTask): EventMetadata => ({ at: deps.clock().toISOString(), accountId: t.accountId, correlationId: t.taskId });

  /** Still this poller's to follow (not untracked since, nor tracked again as a new entry). */
  const followed = (entry: Tracked) => tracked.get(entry.task.taskId) === entry;
  /** The upstream call's signal: aborts at the deadline (`signal`) or when the task is untracked. */
  /**
   * Runs one upstream call of the entry with a signal aborted at the deadline (`deadline`, when
   * given) or when the task is untracked meanwhile. Linked by a listener removed after the call,
   * not AbortSignal.any, whose composite signals stay reachable from long-lived sources.
   */
  async function asCall<T>(entry: Tracked, deadline: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const call = new AbortController();
    const onDeadline = () => call.abort(deadline?.reason);
    if (deadline?.aborted) call.abort(deadline.reason);
    else deadline?.addEventListener('abort', onDeadline, { once: true });
    entry.call = call;
    try {
      return await run(call.signal);
    } finally {
      deadline?.removeEventListener('abort', onDeadline);
      if (entry.call === call) entry.call = undefined;
    }
  }

  function schedule(entry: Tracked, delayMs: number): void {
    if (stopped || !followed(entry)) return;
    // Never past the deadline: the poll at the deadline fails the task.
    const deadline = deadlineOf(entry.task);
    const delay = deadline ? Math.min(delayMs, remainingMs(deadline, deps.clock())) : delayMs;
    entry.timer = setTimeout(() => {
      const p = pollOnce(entry).catch((err: unknown) => {
        deps.log.error({ err, taskId: entry.task.taskId }, 'poll failed unexpectedly');
        entry.errors++;
        schedule(entry, backoff(entry));
      });
      running.add(p);
      void p.finally(() => running.delete(p));
    }, delay);
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
      { type: 'FailTask', data: { code: 'timeout', reason: `no result within ${deadline.maxAgeSeconds} s`, completedAt: nowSeconds() } },
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

  async function finish(entry: Tracked, status: UpstreamStatus, deadline?: TaskDeadline): Promise<void> {
    const t = entry.task;
    const known = entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision };
    if (status.state === 'succeeded') {
      const channel = deps.catalog.channel(t.channelId!)!;
      const adapter = deps.upstreams.get(channel.family)!;
      const baseUrl = resolveBaseUrl(channel.baseUrl, deps.selfUrl());
      let completion: CompletionData;
      try {
        completion = await asCall(entry, undefined, (abort) =>
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
        await executeTask(deps.events, t.taskId, { type: 'FailTask', data: { code: 'result_unavailable', reason, completedAt: nowSeconds() } }, meta(t), known);
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
        { type: 'FailTask', data: { code: status.code, reason: status.reason, completedAt: nowSeconds() } },
        meta(t),
        known,
      );
    } else if (status.state === 'lost') {
      await executeTask(
        deps.events,
        t.taskId,
        { type: 'FailTask', data: { code: 'upstream_task_lost', reason: status.reason, completedAt: nowSeconds() } },
        meta(t),
        known,
      );
    }
    tracked.delete(t.taskId);
  }

  async function pollOnce(entry: Tracked): Promise<void> {
    if (stopped || !followed(entry)) return;
    const t = entry.task;
    const channel = t.channelId ? deps.catalog.channel(t.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    if (!channel || !adapter || !t.upstreamTaskId) {
      await finish(entry, { state: 'lost', reason: `channel ${t.channelId} is gone` });
      return;
    }
    const deadline = taskDeadline(t.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds);
    if (remainingMs(deadline, deps.clock()) <= 0) {
      await timeOut(entry, deadline);
      return;
    }
    let status: UpstreamStatus;
    try {
      status = await beforeDeadline(deadline, deps.clock(), (atDeadline) =>
        asCall(entry, atDeadline, (signal) =>
          limitOf(channel.channelId).run(() =>
            adapter.poll({
              channel,
              baseUrl: resolveBaseUrl(channel.baseUrl, deps.selfUrl()),
              upstreamModel: upstreamModelOf(channel, t.model),
              task: t,
              upstreamTaskId: t.upstreamTaskId!,
              signal,
            }),
          ),
        ),
      );
    } catch (err) {
      // Revoked mid-poll (the abort is the likely error): the partition's new owner polls it.
      // Stopped mid-poll: nothing is recorded, the next start adopts the task.
      if (stopped || !followed(entry)) return;
      await timeOutOrBackOff(entry, deadline, err, 'poll error; backing off');
      return;
    }
    if (!followed(entry)) return;
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

  return {
    track(task, revision) {
      if (stopped || task.final || tracked.has(task.taskId)) return;
      const entry: Tracked = { task, revision, errors: 0, polls: 0 };
      tracked.set(task.taskId, entry);
      schedule(entry, nextPollIn(entry));
    },
    untrackWhere(matches) {
      for (const [taskId, entry] of tracked) {
        if (!matches(taskId)) continue;
        clearTimeout(entry.timer);
        tracked.delete(taskId);
        entry.call?.abort(new Error("the task's partition moved to another instance"));
      }
    },
    size: () => tracked.size,
    lastPoll: () => lastPoll,
    async stop() {
      stopped = true;
      for (const entry of tracked.values()) {
        clearTimeout(entry.timer);
        // A call under way records nothing once stopped: end it rather than wait for the upstream.
        entry.call?.abort(new Error('the poller is stopping'));
      }
      await Promise.allSettled([...running]);
    },
  };
}

/** Loads a task's current state for tracking (used when rebuilding the in-flight set). */
export async function loadTracked(events: EventStore, taskId: string): Promise<KnownTask | undefined> {
  const { state } = await readTask(events, taskId);
  return state.status === 'none' || state.final ? undefined : state;
}
