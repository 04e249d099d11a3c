/**
 * The write side of the SQLite event store: one transaction per group-commit batch, one
 * savepoint per append, so a failed expectation rejects only its own caller. Expected
 * revisions follow EventStoreDB; a retried append whose ids are exactly the stream's last
 * events succeeds with the stored result and writes nothing. An append that follows another
 * of the same batch (`after`) is applied only when that one succeeded: both then commit in the
 * batch's one transaction, so neither is on disk without the other having been decided.
 */
import { expectationHolds, PrecedingAppendFailedError, WrongExpectedRevisionError, type AppendResult, type ExpectedRevision } from '../../ports/event-store.js';
import type { SerializedEvent } from '../event-json.js';
import type { SqliteDatabase } from './database.js';
import type { JobOutcome } from '../job-outcome.js';

export interface AppendJob {
  stream: string;
  events: readonly SerializedEvent[];
  expected: ExpectedRevision;
  /** A job earlier in the same batch that must succeed for this one to be applied. */
  after?: AppendJob;
}

export interface AppendBatchResult {
  outcomes: JobOutcome<AppendResult>[];
  /** True when at least one event was written (subscriptions should wake). */
  wrote: boolean;
  /** The events written, in position order. */
  written: WrittenEvent[];
}

export interface WrittenEvent {
  stream: string;
  revision: number;
  position: bigint;
  event: SerializedEvent;
}

interface StreamHead {
  revision: bigint;
  position: bigint;
}

interface StoredId {
  stream: string;
  revision: bigint;
}

export function prepareAppendBatch(db: SqliteDatabase): (jobs: readonly AppendJob[]) => AppendBatchResult {
  const lastOfStream = db
    .prepare<[string], StreamHead>('SELECT revision, position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1')
    .safeIntegers(true);
  const byId = db.prepare<[string], StoredId>('SELECT stream, revision FROM events WHERE event_id = ?').safeIntegers(true);
  const insert = db
    .prepare<[string, number, string, string, string, string]>(
      'INSERT INTO events (stream, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .safeIntegers(true);

  function applyOne(job: AppendJob): { result: AppendResult; written: WrittenEvent[] } {
    const head = lastOfStream.get(job.stream);
    const current = head ? Number(head.revision) : -1;
    if (!expectationHolds(job.expected, current)) return storedBefore(job);
    if (job.events.length === 0) {
      return { result: { nextExpectedRevision: current, position: head?.position ?? 0n }, written: [] };
    }
    // An id already stored is found by the insert itself (event_id is UNIQUE): looking each one
    // up first cost an index read per event on every append, for the rare retry.
    try {
      const written = job.events.map((event, index): WrittenEvent => {
        const revision = current + 1 + index;
        const info = insert.run(job.stream, revision, event.id, event.type, event.data, event.metadata);
        return { stream: job.stream, revision, position: BigInt(info.lastInsertRowid), event };
      });
      return { result: { nextExpectedRevision: current + job.events.length, position: written.at(-1)!.position }, written };
    } catch (error) {
      if (error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new EventIdStored();
      throw error;
    }
  }

  /**
   * An append whose expectation fails, or one of whose ids is stored: a retry of an append that
   * was written (its ids exactly the stream's last events) succeeds with the stored result and
   * writes nothing; anything else is a conflict. Reads only.
   */
  function storedBefore(job: AppendJob): { result: AppendResult; written: WrittenEvent[] } {
    const head = lastOfStream.get(job.stream);
    const current = head ? Number(head.revision) : -1;
    const stored = job.events.map((event) => byId.get(event.id));
    const firstRevision = current - job.events.length + 1;
    const isRetry =
      job.events.length > 0 && stored.every((row, index) => row !== undefined && row.stream === job.stream && Number(row.revision) === firstRevision + index);
    if (isRetry && head) return { result: { nextExpectedRevision: current, position: head.position }, written: [] };
    throw new WrongExpectedRevisionError(job.stream, job.expected, current);
  }

  // A transaction function called inside another one runs as a SAVEPOINT: when it throws,
  // only its own inserts are rolled back.
  const inSavepoint = db.transaction(applyOne);

  /** The outcome of one job of the batch; the events it wrote go to `written`. */
  function applyAfterPreceding(job: AppendJob, outcomeOf: ReadonlyMap<AppendJob, JobOutcome<AppendResult>>, written: WrittenEvent[]): JobOutcome<AppendResult> {
    if (job.after) {
      const preceding = outcomeOf.get(job.after);
      // The store queues a dependent append only behind a job of the same batch.
      if (!preceding) return { ok: false, error: new Error(`append to ${job.stream}: the append it follows is not earlier in its batch`) };
      if (!preceding.ok) return { ok: false, error: new PrecedingAppendFailedError(job.stream, preceding.error) };
    }
    try {
      const applied = inSavepoint(job);
      written.push(...applied.written);
      return { ok: true, value: applied.result };
    } catch (error) {
      if (!(error instanceof EventIdStored)) return { ok: false, error };
    }
    // Its savepoint rolled back the inserts made before the stored id was met.
    try {
      return { ok: true, value: storedBefore(job).result };
    } catch (error) {
      return { ok: false, error };
    }
  }

  const inTransaction = db.transaction((jobs: readonly AppendJob[]): AppendBatchResult => {
    const written: WrittenEvent[] = [];
    const outcomeOf = new Map<AppendJob, JobOutcome<AppendResult>>();
    const outcomes = jobs.map((job): JobOutcome<AppendResult> => {
      const outcome = applyAfterPreceding(job, outcomeOf, written);
      outcomeOf.set(job, outcome);
      return outcome;
    });
    return { outcomes, wrote: written.length > 0, written };
  });

  return (jobs) => inTransaction.immediate(jobs);
}

/** An insert met an event id already stored (applyOne): the job is then a retry or a conflict (storedBefore). */
class EventIdStored extends Error {}
