/**
 * The events this process committed last, decoded once and shared by every reader of the store
 * object: in the embedded deployment a dozen subscriptions (projections, publisher, the engine's
 * processors) each read every new event, and reading it from SQLite and parsing its JSON once
 * per reader was most of what a commit cost them.
 *
 * It holds a run of consecutive positions only. Another process appending to the same file
 * leaves a gap, and a read that reaches past the run, or starts before it, goes to SQLite as
 * before; so a read answered here is exactly what SQLite would answer. The events are frozen,
 * data and metadata too: they are shared, and a reader that changed one would change it for all
 * (a frozen object refuses the change with a TypeError in strict mode, which every module is).
 */
import type { RecordedEvent } from '../../ports/event-store.js';

export interface RecentEvents {
  /** Events just committed by this process, in position order. */
  add(events: readonly RecordedEvent[]): void;
  /**
   * Events with after < position <= upTo of streams starting with one of `prefixes` (all, when
   * empty), at most `limit` (negative: no limit); undefined when the run does not hold that range.
   */
  read(after: bigint, upTo: bigint, limit: number, prefixes: readonly string[]): RecordedEvent[] | undefined;
}

export function createRecentEvents(capacity: number): RecentEvents {
  let run: RecordedEvent[] = [];
  /** Position of run[0]. */
  let first = 0n;

  return {
    add(events) {
      if (events.length === 0) return;
      const start = events[0]!.position;
      const contiguous = run.length > 0 && start === first + BigInt(run.length);
      for (const event of events) deepFreeze(event);
      if (contiguous) run.push(...events);
      else {
        run = [...events];
        first = start;
      }
      if (run.length > capacity) {
        const drop = run.length - capacity;
        run = run.slice(drop);
        first += BigInt(drop);
      }
    },

    read(after, upTo, limit, prefixes) {
      const last = first + BigInt(run.length) - 1n;
      if (run.length === 0 || after < first - 1n || upTo > last) return undefined;
      const found: RecordedEvent[] = [];
      const max = limit < 0 ? Infinity : limit;
      for (let i = Number(after + 1n - first); i < run.length && found.length < max; i++) {
        const event = run[i]!;
        if (event.position > upTo) break;
        if (prefixes.length === 0 || prefixes.some((p) => event.streamName.startsWith(p))) found.push(event);
      }
      return found;
    },
  };
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}
