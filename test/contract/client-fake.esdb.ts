/**
 * An in-memory stand-in for the parts of `@eventstore/db-client`'s EventStoreDBClient the
 * adapter uses, behaving as the client and server were read to behave (see
 * src/adapters/esdb/records.ts): positions `{commit, prepare}` equal per event and ascending with
 * gaps; stream reads that throw StreamNotFoundError while iterating; `$all` reads inclusive of
 * `fromPosition` forwards and exclusive backwards; subscriptions exclusive of `fromPosition`,
 * server-side filtered, that do not resubscribe by themselves; WrongExpectedVersionError with
 * the current revision; MaxAppendSizeExceededError for an append over `maxAppendSize` (the
 * server's `MaxAppendSize`, default 1,048,576 bytes, summed over the append's events as data
 * bytes + metadata bytes + 2 × type length, the server's `Event.SizeOnDisk`), before anything
 * is written; a subscription from a position that is not a record's own fails as the server's
 * InvalidPosition does (see subscribeToAll). It proves the adapter's own logic, not EventStoreDB's behaviour.
 */
import { PassThrough } from 'node:stream';
import {
  BACKWARDS,
  END,
  MaxAppendSizeExceededError,
  START,
  StreamNotFoundError,
  UnknownError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendResult,
  type AppendToStreamOptions,
  type EventData,
  type Filter,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeToAllOptions,
} from '@eventstore/db-client';

interface StoredEvent {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  isJson: true;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: Position;
}

type FakeSubscription = PassThrough & { unsubscribe(): Promise<void> };

const resolved = (event: StoredEvent): AllStreamResolvedEvent => ({ event: { ...event }, commitPosition: event.position.commit }) as AllStreamResolvedEvent;

function matches(filter: Filter | undefined, event: StoredEvent): boolean {
  if (!filter) return true;
  const subject = filter.filterOn === 'streamName' ? event.streamId : event.type;
  if ('prefixes' in filter) return filter.prefixes.some((prefix) => subject.startsWith(prefix));
  return new RegExp(filter.regex).test(subject);
}

export class EsdbClientFake {
  readonly log: StoredEvent[] = [];
  readonly appendCalls: Array<{ stream: string; expectedRevision: AppendToStreamOptions['expectedRevision'] }> = [];
  subscribeCalls: Array<Position | typeof START | typeof END> = [];
  private readonly live = new Set<{ stream: FakeSubscription; filter: Filter | undefined }>();
  private nextPosition = 1000n;
  disposed = false;

  /** `maxAppendSize`: the server's MaxAppendSize (EventStoreDB's default unless a test sets one). */
  constructor(readonly maxAppendSize = 1_048_576) {}

  /** Appends an event EventStoreDB itself would write (statistics, metadata). */
  addSystemEvent(streamId = '$stats-127.0.0.1:2113', type = '$statsCollected'): void {
    this.store(streamId, { id: crypto.randomUUID(), type, data: {}, metadata: undefined });
  }

  /** Simulates a lost connection: every live subscription errors (and closes). */
  dropSubscriptions(): void {
    for (const entry of [...this.live]) {
      this.live.delete(entry);
      entry.stream.destroy(new Error('14 UNAVAILABLE: Connection dropped'));
    }
  }

  liveSubscriptions(): number {
    return this.live.size;
  }

  async appendToStream(streamName: string, events: EventData | EventData[], options: AppendToStreamOptions = {}): Promise<AppendResult> {
    await Promise.resolve();
    const list = Array.isArray(events) ? events : [events];
    const expected = options.expectedRevision ?? 'any';
    this.appendCalls.push({ stream: streamName, expectedRevision: expected });
    const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
    const size = list.reduce((sum, event) => sum + bytes(event.data) + bytes(event.metadata) + event.type.length * 2, 0);
    if (size > this.maxAppendSize) throw MaxAppendSizeExceededError.fromMaxAppendSize(this.maxAppendSize);
    const current = this.currentRevision(streamName);
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === -1n) ||
      (expected === 'stream_exists' && current >= 0n) ||
      (typeof expected === 'bigint' && expected === current);
    if (!holds) {
      throw new WrongExpectedVersionError(undefined, {
        streamName,
        expected,
        current: current === -1n ? 'no_stream' : current,
      });
    }
    let last: StoredEvent | undefined;
    for (const event of list) last = this.store(streamName, event);
    return { success: true, nextExpectedRevision: this.currentRevision(streamName), ...(last ? { position: last.position } : {}) };
  }

  readStream(streamName: string, options: ReadStreamOptions = {}): AsyncIterable<{ event: StoredEvent }> {
    const log = this.log;
    return {
      async *[Symbol.asyncIterator]() {
        await Promise.resolve();
        let events = log.filter((event) => event.streamId === streamName);
        if (events.length === 0) throw new StreamNotFoundError(undefined, streamName);
        const backwards = options.direction === BACKWARDS;
        if (backwards) events = events.reverse();
        const from = options.fromRevision ?? (backwards ? END : START);
        if (typeof from === 'bigint') events = events.filter((e) => (backwards ? e.revision <= from : e.revision >= from));
        const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
        for (const event of events.slice(0, max)) yield { event: { ...event } };
      },
    };
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<AllStreamResolvedEvent> {
    const log = this.log;
    return {
      async *[Symbol.asyncIterator]() {
        await Promise.resolve();
        const backwards = options.direction === BACKWARDS;
        const from = options.fromPosition ?? (backwards ? END : START);
        let events = backwards ? [...log].reverse() : [...log];
        if (typeof from === 'object') {
          events = events.filter((e) => (backwards ? e.position.commit < from.commit : e.position.commit >= from.commit));
        }
        const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
        for (const event of events.slice(0, max)) yield resolved(event);
      },
    };
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): FakeSubscription {
    const from = options.fromPosition ?? START;
    this.subscribeCalls.push(from);
    const stream = Object.assign(new PassThrough({ objectMode: true }), {
      unsubscribe: async () => {
        this.live.forEach((entry) => entry.stream === stream && this.live.delete(entry));
        stream.destroy();
      },
    });
    const entry = { stream, filter: options.filter };
    setImmediate(() => {
      if (stream.destroyed) return;
      if (typeof from === 'object' && !this.isRecordPosition(from)) {
        // The server's read handlers answer a position that is not a record's own (inside one,
        // or past the log's end) with ReadAllResult.InvalidPosition, sent as gRPC status 3
        // INVALID_ARGUMENT "Trying to read from an invalid position." (RpcExceptions
        // .InvalidPositionException) with no `exception` metadata: the client's
        // convertToCommandError turns that into an UnknownError carrying code 3.
        const details = 'Trying to read from an invalid position.';
        // A gRPC ServiceError as @grpc/grpc-js builds it (no `exception` entry in its metadata).
        const serviceError = Object.assign(new Error(`3 INVALID_ARGUMENT: ${details}`), { code: 3, details, metadata: { getMap: () => ({}) } });
        stream.destroy(new UnknownError(serviceError as unknown as ConstructorParameters<typeof UnknownError>[0]));
        return;
      }
      stream.emit('confirmation');
      for (const event of this.log) {
        if (typeof from === 'object' && event.position.commit <= from.commit) continue;
        if (from === END) continue;
        if (matches(entry.filter, event)) stream.write(resolved(event));
      }
      this.live.add(entry);
    });
    return stream;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const entry of this.live) entry.stream.destroy();
    this.live.clear();
  }

  /** An event's own position, or the end of the log (where the next record will start). */
  private isRecordPosition(position: Position): boolean {
    const end = this.log.length > 0 ? this.log[this.log.length - 1]!.position.commit : 0n;
    return position.commit === end || this.log.some((e) => e.position.commit === position.commit);
  }

  private currentRevision(streamName: string): bigint {
    let revision = -1n;
    for (const event of this.log) if (event.streamId === streamName) revision = event.revision;
    return revision;
  }

  private store(streamId: string, event: { id: string; type: string; data: unknown; metadata: unknown }): StoredEvent {
    this.nextPosition += 64n + BigInt(this.log.length % 7) * 13n;
    const stored: StoredEvent = {
      streamId,
      id: event.id,
      revision: this.currentRevision(streamId) + 1n,
      type: event.type,
      isJson: true,
      data: JSON.parse(JSON.stringify(event.data) ?? 'null') as unknown,
      metadata: event.metadata === undefined ? undefined : (JSON.parse(JSON.stringify(event.metadata)) as unknown),
      created: new Date(),
      position: { commit: this.nextPosition, prepare: this.nextPosition },
    };
    this.log.push(stored);
    for (const entry of this.live) if (matches(entry.filter, stored)) entry.stream.write(resolved(stored));
    return stored;
  }
}
