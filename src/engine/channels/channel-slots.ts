/**
 * Calls per upstream channel limited to a number at once; what is over the limit waits as a
 * plain reference in the channel's queue (first come, first served) and is started when a call
 * ends. Unlike a semaphore's `run`, a waiter holds no suspended call chain, no promise and no
 * signal: at 100,000 tasks in flight most polls that are due wait here.
 */
export class ChannelSlots<T> {
  private readonly channels = new Map<string, { active: number; waiting: Set<T> }>();

  /** `start` is called when an item gets a slot; its call must end with `release` of the channel. */
  constructor(
    private readonly limit: number,
    private readonly start: (item: T) => void,
  ) {}

  /** Started at once when the channel has a free slot, otherwise queued. */
  enqueue(channelId: string, item: T): void {
    const channel = this.channelOf(channelId);
    if (channel.active < this.limit) {
      channel.active++;
      this.start(item);
    } else {
      channel.waiting.add(item);
    }
  }

  /** Out of the queue (untracked, timed out); true when it was waiting there. */
  remove(channelId: string, item: T): boolean {
    return this.channels.get(channelId)?.waiting.delete(item) ?? false;
  }

  /** A call of the channel ended: the next waiting item takes its slot. */
  release(channelId: string): void {
    const channel = this.channels.get(channelId);
    if (!channel) return;
    const next = channel.waiting.values().next();
    if (next.done) {
      channel.active--;
      if (channel.active <= 0) this.channels.delete(channelId);
      return;
    }
    channel.waiting.delete(next.value);
    this.start(next.value);
  }

  /** Forgets every waiting item (the poller stops); calls under way still release their slots. */
  clearWaiting(): void {
    for (const channel of this.channels.values()) channel.waiting.clear();
  }

  private channelOf(channelId: string): { active: number; waiting: Set<T> } {
    let channel = this.channels.get(channelId);
    if (!channel) this.channels.set(channelId, (channel = { active: 0, waiting: new Set() }));
    return channel;
  }
}
