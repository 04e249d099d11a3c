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

/**
 * The largest append every adapter takes: EventStoreDB's default `MaxAppendSize` (1 MiB),
 * measured as the server measures it (its `Event.SizeOnDisk`): for each event of the append,
 * the bytes of its JSON data and JSON metadata plus twice the length of its type, summed. An
 * append over it is refused with EventTooLargeError by every adapter, before anything is
 * written, so the embedded default refuses exactly what an EventStoreDB deployment would.
 */
export const MAX_APPEND_BYTES = 1_048_576;

/** An append over MAX_APPEND_BYTES (or over the server's own limit); nothing of it was written. */
export class EventTooLargeError extends Error {
  constructor(
    readonly streamName: string,
    /** Size of the refused append as measured (0 when only the server knew it). */
    readonly size: number,
    readonly limit: number,
  ) {
    super(`stream ${streamName}: the append is ${size > 0 ? `${size} bytes, ` : ''}over the ${limit} byte limit of one append`);
    this.name = 'EventTooLargeError';
  }
}

/** One event as the store writes it: the JSON text of its data and of its metadata. */
export interface SerializedEventSize {
  type: string;
  data: string;
  metadata: string;
}

/**
 * The size of an append as MAX_APPEND_BYTES measures it, the one rule for every measure: each
 * event's data and metadata as `bytesOf` counts them, and twice its type's length.
 */
export function measuredAppendSize<D>(events: ReadonlyArray<{ type: string; data: D; metadata: D }>, bytesOf: (value: D) => number): number {
  let size = 0;
  for (const event of events) size += bytesOf(event.data) + bytesOf(event.metadata) + event.type.length * 2;
  return size;
}

/** The size of an append of already serialised events, as MAX_APPEND_BYTES measures it. */
export function serializedAppendSize(events: readonly SerializedEventSize[]): number {
  return measuredAppendSize(events, (text) => Buffer.byteLength(text));
}

/** The size of an append of `events` (serialised with JSON.stringify), as MAX_APPEND_BYTES measures it. */
export function appendSize(events: ReadonlyArray<Pick<NewEvent, 'type' | 'data' | 'metadata'>>): number {
  return measuredAppendSize<unknown>(events, (value) => Buffer.byteLength(JSON.stringify(value) ?? 'null'));
}

/** Throws EventTooLargeError when an append of this size is over the limit. */
export function assertAppendFits(streamName: string, size: number, limit = MAX_APPEND_BYTES): void {
  if (size > limit) throw new EventTooLargeError(streamName, size, limit);
}

/** Every adapter refuses an empty or non-string stream name alike. */
export function requireStreamName(streamName: string): string {
  if (typeof streamName !== 'string' || streamName.length === 0) throw new TypeError('stream name must be a non-empty string');
  return streamName;
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

export interface ReadStreamOptions {
  /** Inclusive starting revision: the first event read (forwards) or the newest (backwards). */
  fromRevision?: number;
  maxCount?: number;
  direction?: 'forwards' | 'backwards';
}

export interface ReadAllOptions {
  /** Exclusive: only events after this position. Omitted = from the beginning. */
  after?: bigint;
  maxCount?: number;
  /** Only streams whose name starts with one of these prefixes. */
  streamPrefixes?: readonly string[];
}

export interface ReadStreamsWithPrefixOptions {
  /** Upper bound of one yielded page. Default 1000. */
  pageSize?: number;
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

export interface AppendOptions {
  expectedRevision?: ExpectedRevision;
  /**
   * Another append to this store, still pending, that must be durable before this one is:
   * when it fails, this append fails with PrecedingAppendFailedError and writes nothing. Not a
   * multi-stream transaction: both stay single-stream appends with their own expectations, and
   * this one may fail after the preceding one succeeded. A store that commits in groups (the
   * embedded SQLite store) commits both in one group when it can; every other store simply
   * waits for the preceding append before sending this one.
   */
  after?: Promise<AppendResult>;
}

/** The append this one was to follow (AppendOptions.after) failed; nothing of this one was written. */
export class PrecedingAppendFailedError extends Error {
  constructor(
    readonly streamName: string,
    readonly precedingError: unknown,
  ) {
    super(`stream ${streamName}: not appended, the append it was to follow failed`, { cause: precedingError });
    this.name = 'PrecedingAppendFailedError';
  }
}

/** Waits for the append `options.after` names (if any): how a store that sends appends one by one honours it. */
export async function awaitPrecedingAppend(streamName: string, options: AppendOptions | undefined): Promise<void> {
  if (!options?.after) return;
  try {
    await options.after;
  } catch (error) {
    throw new PrecedingAppendFailedError(streamName, error);
  }
}

export interface EventStore {
  /**
   * Appends atomically to one stream. Throws WrongExpectedRevisionError when the expectation
   * does not hold, EventTooLargeError (before anything is written) when the append is over
   * MAX_APPEND_BYTES. Appending events whose ids are all already the last events of the stream
   * (a retried append) succeeds without writing them twice.
   */
  append(streamName: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Events of one stream from a revision (inclusive), at most maxCount. Forwards (the default):
   * in revision order, from revision 0 unless told. Backwards: newest first, from the last
   * event unless told (loading an aggregate from its last snapshot reads only the tail).
   * Empty when the stream does not exist.
   */
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Every event of every stream whose name starts with `prefix` ('' = every stream), in pages
   * (never empty) of at most `pageSize`, so memory stays bounded however large the store is.
   * Order: each stream comes complete, from revision 0, in revision order. Nothing is promised
   * across streams (SQLite yields one stream after another; EventStoreDB interleaves them in
   * commit order): a reader keeps state per stream. For a replay that needs no global order, it
   * touches no event of other streams where the store can (SQLite: the (stream, revision) index).
   * Events committed before the call are all read; one committed during the read may or may not
   * be, but what is read of a stream is always gapless from revision 0.
   */
  readStreamsWithPrefix(prefix: string, options?: ReadStreamsWithPrefixOptions): AsyncIterable<RecordedEvent[]>;
  /** Position of the last event in the store (0n when empty). */
  headPosition(): Promise<bigint>;
  subscribe(options?: SubscribeOptions): Subscription;
  /** Every adapter answers, or throws: used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
