/**
 * An upstream call of a followed task (a poll, or the re-hosting of its results) runs with an
 * abort controller that exists only while it runs: aborted when the task is untracked, the
 * poller stops or (a poll) the deadline comes. The poller stops waiting for an upstream that
 * ignores its signal as soon as it aborts.
 */
import type { ChannelDoc } from '../../../projections/channels.js';
import type { KnownTask } from '../../domain/task.js';
import { upstreamModelOf, type UpstreamAdapter, type UpstreamStatus } from '../channels/upstream.js';
import type { Tracked } from './poll-schedule.js';
import type { PollSlots } from './poll-slots.js';
import { untilAborted } from '../tasks/deadline.js';

/** Runs the call with the entry's abort controller (re-hosting has its own deadline as well: rehostCompletion). */
export async function asCall<T>(entry: Tracked, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const call = new AbortController();
  entry.call = call;
  try {
    return await run(call.signal);
  } finally {
    if (entry.call === call) entry.call = undefined;
  }
}

/** The upstream's status of the entry's task (`t`, its state as read for this round), its channel's slot held until the call settles; no longer waited for once aborted. */
export function pollUpstream(
  entry: Tracked,
  t: KnownTask,
  on: { channel: ChannelDoc; adapter: UpstreamAdapter; baseUrl: string },
  slots: Pick<PollSlots, 'holding'>,
): Promise<UpstreamStatus> {
  return asCall(entry, (signal) =>
    untilAborted(
      slots.holding(t.channelId!, () =>
        on.adapter.poll({
          channel: on.channel,
          baseUrl: on.baseUrl,
          upstreamModel: upstreamModelOf(on.channel, t.model),
          task: t,
          upstreamTaskId: t.upstreamTaskId!,
          signal,
        }),
      ),
      signal,
    ),
  );
}
