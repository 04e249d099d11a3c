/**
 * Poller: follows every task that runs upstream. Polls on the family's interval, backs off
 * exponentially with jitter on errors, limits polls in flight per channel, appends only
 * changes, re-hosts results on success, and fails a task at its deadline (created + the
 * family's max age): the next poll is never scheduled past it, and a poll or a re-hosting
 * still running then is abandoned (its signal aborts), whatever the upstream does.
 * The in-flight set is rebuilt from the `inflight` view on start (adoption.ts).
 *
 * Wiring and the round of one poll: when a task is looked at next is the poll schedule's
 * (poll-schedule.ts), polls in flight per channel the poll slots' (poll-slots.ts), and what an
 * answer records the poll recording's (poll-recording.ts).
 */
import type { KnownTask } from '../../domain/task.js';
import { remainingMs, TaskDeadlineError, taskDeadline, type TaskDeadline } from '../tasks/deadline.js';
import { resolveBaseUrl, type UpstreamStatus } from '../channels/upstream.js';
import { createPollSchedule, type Tracked } from './poll-schedule.js';
import { createPollSlots } from './poll-slots.js';
import { createPollRecording, type PollRecordingDeps, type RoundState } from './poll-recording.js';
import { pollUpstream } from './poll-calls.js';
import { readTask } from '../commands/task-commands.js';

/** What the poll recording needs, but what the poller itself tells it (which tasks it follows). */
export interface PollerDeps extends Omit<PollRecordingDeps, 'followed' | 'ended'> {
  pollIntervalMs?: number;
  channelConcurrency: number;
}

export interface Poller {
  /** Follows the task from its next poll on: only its id, channel and age are kept (poll-schedule.ts, FollowedTask). */
  track(task: Pick<KnownTask, 'taskId' | 'channelId' | 'createdAt' | 'final'>): void;
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

  /** Still this poller's to follow (not untracked since, nor tracked again as a new entry). */
  const followed = (entry: Tracked) => tracked.get(entry.task.taskId) === entry;
  const schedule = createPollSchedule({ ...deps, live: (entry) => !stopped && followed(entry), onDue });
  const slots = createPollSlots(deps.channelConcurrency, startPoll);
  const recording = createPollRecording({ ...deps, followed, ended: (taskId) => tracked.delete(taskId) });

  /** Runs a step of the entry in the background; an error nothing expected backs the task off. */
  function inBackground(entry: Tracked, step: () => Promise<void>): void {
    const p = step().catch((err: unknown) => {
      deps.log.error({ err, taskId: entry.task.taskId }, 'poll failed unexpectedly');
      entry.errors++;
      schedule.backOff(entry);
    });
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  /**
   * The task's state as stored now, read for a round (through the stream-state cache: usually
   * one indexed read that finds nothing new). Undefined once the task has ended, whoever ended
   * it: then it is no longer followed.
   */
  async function current(entry: Tracked): Promise<RoundState | undefined> {
    const { state, revision } = await readTask(deps.events, entry.task.taskId);
    if (state.status !== 'none' && !state.final) return { state, revision };
    if (followed(entry)) tracked.delete(entry.task.taskId);
    return undefined;
  }

  /** Records an outcome on the task as stored now (nothing when it has ended meanwhile). */
  async function recordOn(entry: Tracked, record: (seen: RoundState) => Promise<void>): Promise<void> {
    const seen = await current(entry);
    if (seen && !stopped && followed(entry)) await record(seen);
  }

  /** Its deadline passed while it waited: it fails with `timeout`. */
  const timeOutNow = (entry: Tracked, deadline: TaskDeadline) => recordOn(entry, (seen) => recording.timeOut(seen, deadline));

  /** Its channel is gone: the upstream task cannot be polled any more, and is lost. */
  const loseWithChannel = (entry: Tracked) =>
    recordOn(entry, (seen) => recording.finish(entry, seen, { state: 'lost', reason: `channel ${entry.task.channelId} is gone` }));

  /** Its time came: the next poll, or (queued or calling) its deadline. */
  function onDue(entry: Tracked): void {
    if (stopped || !followed(entry)) return;
    if (entry.phase === 'waiting') beginPoll(entry);
    else if (entry.phase === 'queued') {
      slots.remove(entry);
      entry.phase = 'recording';
      const deadline = schedule.deadlineOf(entry.task)!;
      inBackground(entry, () => timeOutNow(entry, deadline));
    } else if (entry.phase === 'calling') {
      // The call stops being waited for at once (untilAborted), whatever the upstream does.
      entry.call?.abort(new TaskDeadlineError(schedule.deadlineOf(entry.task)!.maxAgeSeconds));
    }
  }

  /** Due: a task whose channel is gone is lost, one past its deadline times out, the others queue for a slot of their channel. */
  function beginPoll(entry: Tracked): void {
    const deadline = schedule.deadlineOf(entry.task);
    entry.phase = 'recording';
    if (!deadline) {
      inBackground(entry, () => loseWithChannel(entry));
      return;
    }
    const left = remainingMs(deadline, deps.clock());
    if (left <= 0) {
      inBackground(entry, () => timeOutNow(entry, deadline));
      return;
    }
    // Waiting for a slot and then calling, the task still fails at its deadline (onDue).
    entry.phase = 'queued';
    schedule.atDeadline(entry, left);
    slots.enqueue(entry);
  }

  /** The poll's outcome is being recorded: its deadline (scheduled while queued or calling) no longer applies. */
  function toRecording(entry: Tracked): void {
    schedule.remove(entry);
    entry.phase = 'recording';
  }

  /** A slot of its channel is the entry's: the upstream poll starts. */
  function startPoll(entry: Tracked): void {
    entry.phase = 'calling';
    inBackground(entry, () => pollOnce(entry));
  }

  async function pollOnce(entry: Tracked): Promise<void> {
    const channelId = entry.task.channelId!;
    const channel = deps.catalog.channel(channelId);
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    if (stopped || !followed(entry) || !channel || !adapter) {
      slots.release(channelId);
      toRecording(entry);
      // The channel went while the poll waited for its slot.
      if (!stopped && followed(entry)) await loseWithChannel(entry);
      return;
    }
    let seen: RoundState | undefined;
    try {
      seen = await current(entry);
    } catch (err) {
      // The store could not be read: the slot goes to the next poll, this one backs off.
      slots.release(channelId);
      throw err;
    }
    if (!seen || stopped || !followed(entry)) {
      slots.release(channelId);
      // Ended meanwhile (by a sweep or another instance): nothing left to poll.
      if (!seen) schedule.remove(entry);
      return;
    }
    const t = seen.state;
    const deadline = taskDeadline(t.createdAt, deps.maxAgeSeconds ?? adapter.maxAgeSeconds);
    if (remainingMs(deadline, deps.clock()) <= 0 || !t.upstreamTaskId) {
      slots.release(channelId);
      toRecording(entry);
      if (t.upstreamTaskId) await recording.timeOut(seen, deadline);
      else await recording.finish(entry, seen, { state: 'lost', reason: 'no upstream task id was recorded' });
      return;
    }
    let status: UpstreamStatus;
    try {
      status = await pollUpstream(entry, t, { channel, adapter, baseUrl: resolveBaseUrl(channel.baseUrl, deps.selfUrl()) }, slots);
    } catch (err) {
      // Revoked mid-poll (the abort is the likely error): the partition's new owner polls it.
      // Stopped mid-poll: nothing is recorded, the next start adopts the task.
      if (stopped || !followed(entry)) return;
      toRecording(entry);
      await timeOutOrBackOff(entry, seen, deadline, err, 'poll error; backing off');
      return;
    }
    if (!followed(entry)) return;
    toRecording(entry);
    entry.errors = 0;
    lastPoll = deps.clock();
    if (status.state === 'queued' || status.state === 'in_progress') {
      const result = await recording.progress(seen, status);
      if (result.state.status !== 'none' && result.state.final) {
        tracked.delete(t.taskId);
        return;
      }
      entry.polls++;
      schedule.next(entry);
      return;
    }
    try {
      await recording.finish(entry, seen, status, deadline);
    } catch (err) {
      // Re-hosting failed in a way another try may mend (a timeout, a 5xx): poll again.
      await timeOutOrBackOff(entry, seen, deadline, err, 're-hosting failed; backing off');
    }
  }

  /** A failed step: past the deadline the task times out, otherwise it is tried again later. */
  async function timeOutOrBackOff(entry: Tracked, seen: RoundState, deadline: TaskDeadline, err: unknown, what: string): Promise<void> {
    if (err instanceof TaskDeadlineError) {
      await recording.timeOut(seen, deadline);
      return;
    }
    entry.errors++;
    // One line, the channel and the reason: an upstream failing is expected, no stack to read.
    deps.log.warn(
      { taskId: entry.task.taskId, channelId: entry.task.channelId, errors: entry.errors, reason: err instanceof Error ? err.message : String(err) },
      what,
    );
    schedule.backOff(entry);
  }

  /** Stops following the entry: out of the schedule and its channel's queue, its call aborted. */
  function drop(entry: Tracked, why: string): void {
    schedule.remove(entry);
    if (entry.phase === 'queued') slots.remove(entry);
    entry.call?.abort(new Error(why));
  }

  return {
    track(task) {
      if (stopped || task.final || tracked.has(task.taskId)) return;
      // A copy of three fields: the state handed in (a whole folded task) is not kept alive.
      const followedTask = { taskId: task.taskId, channelId: task.channelId, createdAt: task.createdAt };
      const entry: Tracked = { task: followedTask, errors: 0, polls: 0, phase: 'waiting', dueAt: 0, heapIndex: -1 };
      tracked.set(task.taskId, entry);
      schedule.next(entry);
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
      schedule.clear();
      slots.clearWaiting();
      // A call under way records nothing once stopped: end it rather than wait for the upstream.
      for (const entry of tracked.values()) entry.call?.abort(new Error('the poller is stopping'));
      await Promise.allSettled([...running, ...slots.calls()]);
    },
  };
}
