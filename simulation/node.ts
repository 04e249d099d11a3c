/**
 * A simulated process: every call it makes to a shared port (event store, views, assets, bus,
 * upstream) passes its gate, before and after the call. A crashed process's gates never open
 * again: whatever it was doing stops at its next await on the outside world, with all of its
 * memory lost (a restart builds a new process on the same stores), and what the store had
 * already committed for it stays committed. A paused process (a GC pause, a frozen container)
 * waits at its gates until it resumes, however long that is. The gates also draw a small
 * latency now and then, which is what reorders the work of different processes.
 */
import type { Random } from './random.js';

export type NodeState = 'up' | 'paused' | 'crashed';

export interface NodeOptions {
  /** Chance that a call waits a little (virtual milliseconds, up to `maxLatencyMs`) first. */
  latencyChance: number;
  maxLatencyMs: number;
}

export class SimNode {
  state: NodeState = 'up';
  /**
   * What a killed process's gates return. One per process, not one for the whole run: every
   * await on it keeps its continuation for as long as the promise lives, and a process-wide one
   * would keep every killed process of every world (gigabytes over hundreds of seeds).
   */
  private readonly never = new Promise<never>(() => undefined);
  private resumed: (() => void)[] = [];

  constructor(
    readonly name: string,
    private readonly random: () => Random,
    private readonly options: NodeOptions,
    /** Clock skew of this process, milliseconds added to the virtual time it reads. */
    readonly skewMs = 0,
  ) {}

  /** This process's clock: virtual time plus its skew. */
  readonly clock = (): Date => new Date(Date.now() + this.skewMs);

  get alive(): boolean {
    return this.state !== 'crashed';
  }

  async gate(): Promise<void> {
    if (this.state === 'up' && this.random().chance(this.options.latencyChance)) {
      await new Promise((resolve) => setTimeout(resolve, this.random().int(1, this.options.maxLatencyMs)));
    }
    return this.wait();
  }

  private onCrash: (() => void)[] = [];

  /** Resolves when the process is killed (a client waiting on it sees the connection drop). */
  crashed(): Promise<void> {
    if (this.state === 'crashed') return Promise.resolve();
    return new Promise((resolve) => this.onCrash.push(resolve));
  }

  /** The process is killed: it never takes another step. */
  crash(): void {
    this.state = 'crashed';
    this.wake();
    const waiting = this.onCrash;
    this.onCrash = [];
    for (const resolve of waiting) resolve();
  }

  pause(): void {
    if (this.state !== 'up') return;
    this.state = 'paused';
    this.pausedSince = Date.now();
    this.pauses.push({ from: this.pausedSince, to: Infinity });
  }

  private pausedMs = 0;
  private pausedSince = 0;
  /** Every pause so far: [from, to) in virtual ms (to: Infinity while it lasts). */
  private readonly pauses: { from: number; to: number }[] = [];

  /** Whether the process was frozen at virtual time `t`. */
  wasPausedAt(t: number): boolean {
    return this.pauses.some((p) => p.from <= t && t < p.to);
  }

  /** The process's own time: virtual milliseconds it has spent running (paused time does not count). */
  awakeMs(): number {
    return Date.now() - this.pausedMs - (this.state === 'paused' ? Date.now() - this.pausedSince : 0);
  }

  /** Virtual time (Date.now) the process last resumed from a pause. */
  lastResumedAt = -Infinity;

  resume(): void {
    if (this.state !== 'paused') return;
    this.state = 'up';
    this.lastResumedAt = Date.now();
    this.pausedMs += Date.now() - this.pausedSince;
    this.pauses[this.pauses.length - 1]!.to = Date.now();
    this.wake();
  }

  private wake(): void {
    const waiting = this.resumed;
    this.resumed = [];
    for (const resolve of waiting) resolve();
  }

  /** `fn` run through the gate on both sides (the latency is drawn on the way out only). */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    await this.gate();
    try {
      return await fn();
    } finally {
      // An answer or an error alike reaches a paused process only when it resumes, a killed one never.
      if (this.state !== 'up') await this.wait();
    }
  }

  /** The gate without latency: hangs while crashed, waits while paused. */
  private async wait(): Promise<void> {
    for (;;) {
      if (this.state === 'crashed') return this.never;
      if (this.state === 'up') return;
      await new Promise<void>((resolve) => this.resumed.push(resolve));
    }
  }

  /** An async iterable whose every step passes the gate. */
  iterable<T>(source: AsyncIterable<T>): AsyncIterable<T> {
    const call = <R>(fn: () => Promise<R>) => this.call(fn);
    return {
      [Symbol.asyncIterator]() {
        const it = source[Symbol.asyncIterator]();
        return {
          next: () => call(() => it.next()),
          return: async (value?: unknown) => (it.return ? it.return(value) : { done: true as const, value: undefined as never }),
        };
      },
    };
  }
}
