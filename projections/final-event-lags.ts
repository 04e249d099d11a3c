/**
 * Projection lag of final task events (TaskSucceeded, TaskFailed): milliseconds from the event's
 * decision (its `metadata.at`) to the moment this process's views show it. A bounded sample,
 * newest kept: what /api/admin/metrics reports and the life-cycle bench reads.
 */
import type { RecordedDomainEvent } from '../src/domain/recorded.js';

const SAMPLE = 100_000;

export interface FinalEventLags {
  /** The final events among `events` are shown from now on. */
  record(events: Iterable<RecordedDomainEvent>): void;
  sample(): readonly number[];
}

export function createFinalEventLags(): FinalEventLags {
  const lags: number[] = [];
  return {
    record(events) {
      const now = Date.now();
      for (const e of events) {
        if (e.type !== 'TaskSucceeded' && e.type !== 'TaskFailed') continue;
        if (lags.length >= SAMPLE) lags.shift();
        lags.push(now - Date.parse(e.metadata.at));
      }
    },
    sample: () => lags,
  };
}
