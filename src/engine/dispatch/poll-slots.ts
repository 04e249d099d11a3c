/**
 * The poll slots: polls in flight limited per upstream channel (channel-slots.ts). A due poll
 * waits in its channel's queue as a plain reference and starts when a slot is free; the slot is
 * held until the upstream call itself settles (not merely until the poller stops waiting for
 * it), and a stop of the poller waits for those calls too.
 */
import { ChannelSlots } from '../channels/channel-slots.js';
import type { Tracked } from './poll-schedule.js';

export interface PollSlots {
  /** Its poll starts at once when its channel has a free slot, otherwise it waits in the channel's queue. */
  enqueue(entry: Tracked): void;
  /** Out of its channel's queue (untracked, timed out). */
  remove(entry: Tracked): void;
  /** A poll of the channel ended without a call (or before it): the next waiting poll takes the slot. */
  release(channelId: string): void;
  /** The upstream call, its channel's slot held until the call settles. */
  holding<T>(channelId: string, call: () => Promise<T>): Promise<T>;
  /** Forgets every waiting poll (the poller stops); calls under way still release their slots. */
  clearWaiting(): void;
  /** The calls holding a slot now. */
  calls(): Promise<void>[];
}

/** `start` is called when an entry gets its slot; its poll must end with `release` of the channel or run its call `holding` it. */
export function createPollSlots(concurrency: number, start: (entry: Tracked) => void): PollSlots {
  const slots = new ChannelSlots<Tracked>(concurrency, start);
  const holding = new Set<Promise<void>>();
  return {
    enqueue: (entry) => slots.enqueue(entry.task.channelId!, entry),
    remove: (entry) => void slots.remove(entry.task.channelId!, entry),
    release: (channelId) => slots.release(channelId),
    holding<T>(channelId: string, call: () => Promise<T>): Promise<T> {
      // Called at once; a synchronous throw becomes the call's rejection.
      const work = (async () => call())();
      const settled = work.then(
        () => slots.release(channelId),
        () => slots.release(channelId),
      );
      holding.add(settled);
      void settled.finally(() => holding.delete(settled));
      return work;
    },
    clearWaiting: () => slots.clearWaiting(),
    calls: () => [...holding],
  };
}
