/**
 * The poll schedule: when each followed task is looked at next, in one timer schedule
 * (timer-schedule.ts). Soon after dispatch, then less often up to the family's interval; after
 * errors, the interval doubling with each error in a row; and never past the task's deadline
 * (created + the family's max age), where the look fails the task.
 */
import type { KnownTask } from '../../domain/task.js';
import type { Catalog } from '../channels/catalog.js';
import type { UpstreamRegistry } from '../channels/upstream.js';
import { remainingMs, taskDeadline, type TaskDeadline } from '../tasks/deadline.js';
import { backoffDelay } from '../../lib/backoff.js';
import { TimerSchedule, type Schedulable } from './timer-schedule.js';

/**
 * What the poller keeps of a task between polls: what schedules it (its channel and age), not its
 * state. A round reads the task's state as stored (the stream-state cache makes that one indexed
 * read of nothing new) and lets it go when it ends, so 100,000 tasks in flight hold 100,000 of
 * these instead of 100,000 folded requests.
 */
export type FollowedTask = Readonly<Pick<KnownTask, 'taskId' | 'channelId' | 'createdAt'>>;

/**
 * A task followed: what polling it needs and where it is in its round, nothing else. Its
 * timing lives in the poller's one schedule (`dueAt`, `heapIndex`), a poll waiting for a slot
 * of its channel is a reference in that channel's queue, and an abort controller exists only
 * while an upstream call of the task runs (at most the channel's concurrency at once), so a
 * task between polls holds no timer, promise, signal or task state.
 */
export interface Tracked extends Schedulable {
  task: FollowedTask;
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

export interface PollScheduleDeps {
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  clock: () => Date;
  pollIntervalMs?: number;
  maxAgeSeconds?: number;
  /** Whether the entry is still followed by a poller that runs: one that is not is never scheduled. */
  live(entry: Tracked): boolean;
  /** Its time came: the next poll, or (queued or calling) its deadline. */
  onDue(entry: Tracked): void;
}

export interface PollSchedule {
  /** When the task must have ended; undefined while its channel or family is unknown. */
  deadlineOf(task: FollowedTask): TaskDeadline | undefined;
  /** Waiting for its next poll, after an answer (or the first, when tracked). */
  next(entry: Tracked): void;
  /** Waiting for its next poll, after an error. */
  backOff(entry: Tracked): void;
  /** Due at its deadline, `leftMs` from now, while it waits for a slot or calls. */
  atDeadline(entry: Tracked, leftMs: number): void;
  /** Not due any more. */
  remove(entry: Tracked): void;
  clear(): void;
}

export function createPollSchedule(deps: PollScheduleDeps): PollSchedule {
  const timers = new TimerSchedule<Tracked>((entry) => deps.onDue(entry));

  function adapterOf(task: FollowedTask) {
    const channel = task.channelId ? deps.catalog.channel(task.channelId) : undefined;
    return channel ? deps.upstreams.get(channel.family) : undefined;
  }

  function deadlineOf(task: FollowedTask): TaskDeadline | undefined {
    const adapter = adapterOf(task);
    return adapter ? taskDeadline(task.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds) : undefined;
  }

  function intervalOf(task: FollowedTask): number {
    return deps.pollIntervalMs ?? adapterOf(task)?.pollIntervalMs ?? 2000;
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

  function schedule(entry: Tracked, delayMs: number): void {
    if (!deps.live(entry)) return;
    // Never past the deadline: the poll at the deadline fails the task.
    const deadline = deadlineOf(entry.task);
    const delay = deadline ? Math.min(delayMs, remainingMs(deadline, deps.clock())) : delayMs;
    entry.phase = 'waiting';
    timers.schedule(entry, delay);
  }

  return {
    deadlineOf,
    next: (entry) => schedule(entry, nextPollIn(entry)),
    backOff: (entry) => schedule(entry, backoff(entry)),
    atDeadline: (entry, leftMs) => timers.schedule(entry, leftMs),
    remove: (entry) => timers.remove(entry),
    clear: () => timers.clear(),
  };
}
