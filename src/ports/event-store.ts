/**
 * EventStore port. The engine relies only on per-stream atomic appends with optimistic
 * concurrency (what EventStoreDB gives); it never assumes a multi-stream transaction.
 *
 * Normalised at the adapter boundary:
 * - stream revisions are 0-based numbers (the first event of a stream has revision 0);
 * - global positions are bigints that sort in commit order; positions are exclusive when
 *   used as a starting point ("after this position").
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface EventMetadata {
  correlationId?: string;
  causationId?: string;
  accountId?: string;
  requestId?: string;
  /** ISO-8601 time the command was decided (taken from the command, never from decide). */
  at: string;
  [key: string]: unknown;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** Unique event id (UUID). Deterministic ids let a retried append be absorbed. */
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> extends NewEvent<Type, Data> {
  streamName: string;
  revision: number;
  position: bigint;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextExpectedRevision: number;
  /** Global position of the last appended event. */
  position: bigint;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    /** Current revision, or -1 when the stream does not exist. */
    readonly actual: number,
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Whether a stream at `current` (-1: no stream) meets an append's expectation — the same for every adapter. */
export function expectationHolds(expected: ExpectedRevision, current: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return current === -1;
    case 'stream_exists':
      return current >= 0;
    default:
      return current === expected;
  }
}

export interface ReadAllOptions {
  /** Exclusive: only events after this position. Omitted = from the beginning. */
  after?: bigint;
  maxCount?: number;
  /** Only streams whose name starts with one of these prefixes. */
  streamPrefixes?: readonly string[];
}

export interface SubscribeOptions {
  /** Exclusive starting position (a checkpoint). Omitted = from the beginning. */
  after?: bigint;
  streamPrefixes?: readonly string[];
  /** Upper bound of one delivered batch. */
  batchSize?: number;
}

/**
 * A catch-up subscription: first delivers what is stored after `after`, then goes live.
 * Pulled sequentially (`for await`), so a consumer finishes one batch (and its checkpoint)
 * before it sees the next. Batches are never empty.
 */
export interface Subscription extends AsyncIterable<RecordedEvent[]> {
  close(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically to one stream. Throws WrongExpectedRevisionError when the expectation
   * does not hold. Appending events whose ids are all already the last events of the stream
   * (a retried append) succeeds without writing them twice.
   */
  append(streamName: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /** Events of one stream in order, from a revision (inclusive). Empty when the stream does not exist. */
  readStream(streamName: string, options?: { fromRevision?: number; maxCount?: number }): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event in the store (0n when empty). */
  headPosition(): Promise<bigint>;
  subscribe(options?: SubscribeOptions): Subscription;
  /** Every adapter answers, or throws: used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
