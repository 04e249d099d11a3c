/**
 * What one group-commit batch of appends does, decided in memory under the store's write lock
 * (append-batch.ts reads what it needs first): each append checked on its own against the
 * stream as the appends before it in the batch left it, with the rules of every adapter
 * (EventStoreDB's): the expected revision, and a retried append — its ids exactly the stream's
 * last events — succeeding with the stored result and writing nothing. Any other append that
 * reuses a stored event id is a conflict. Positions follow the head one by one, in batch order.
 */
import { expectationHolds, WrongExpectedRevisionError, type AppendResult, type ExpectedRevision } from '../../ports/event-store.js';
import type { SerializedEvent } from '../event-json.js';
import type { JobOutcome } from '../job-outcome.js';

export interface AppendJob {
  stream: string;
  events: readonly SerializedEvent[];
  expected: ExpectedRevision;
}

/** The last event of a stream. */
export interface StreamHead {
  revision: number;
  position: bigint;
}

/** Where a stored event id sits. */
export interface StoredId {
  stream: string;
  revision: number;
}

export interface NewRow {
  position: bigint;
  stream: string;
  revision: number;
  event: SerializedEvent;
}

export interface BatchDecision {
  outcomes: JobOutcome<AppendResult>[];
  rows: NewRow[];
  /** The global head after the batch. */
  head: bigint;
}

export function decideBatch(
  jobs: readonly AppendJob[],
  heads: ReadonlyMap<string, StreamHead>,
  storedIds: ReadonlyMap<string, StoredId>,
  head: bigint,
): BatchDecision {
  // What the batch has decided so far overlays what is stored.
  const streamHeads = new Map(heads);
  const ids = new Map(storedIds);
  const rows: NewRow[] = [];
  let position = head;

  const outcomes = jobs.map((job): JobOutcome<AppendResult> => {
    const last = streamHeads.get(job.stream);
    const current = last ? last.revision : -1;
    const conflict = (): JobOutcome<AppendResult> => ({ ok: false, error: new WrongExpectedRevisionError(job.stream, job.expected, current) });

    const stored = job.events.map((event) => ids.get(event.id));
    const storedCount = stored.filter((row) => row !== undefined).length;
    if (storedCount > 0) {
      const firstRevision = current - job.events.length + 1;
      const isRetry = storedCount === job.events.length && stored.every((row, index) => row?.stream === job.stream && row.revision === firstRevision + index);
      return isRetry && last ? { ok: true, value: { nextExpectedRevision: current, position: last.position } } : conflict();
    }
    if (!expectationHolds(job.expected, current)) return conflict();
    if (job.events.length === 0) return { ok: true, value: { nextExpectedRevision: current, position: last?.position ?? 0n } };

    job.events.forEach((event, index) => {
      position += 1n;
      const revision = current + 1 + index;
      rows.push({ position, stream: job.stream, revision, event });
      ids.set(event.id, { stream: job.stream, revision });
    });
    const nextExpectedRevision = current + job.events.length;
    streamHeads.set(job.stream, { revision: nextExpectedRevision, position });
    return { ok: true, value: { nextExpectedRevision, position } };
  });
  return { outcomes, rows, head: position };
}
