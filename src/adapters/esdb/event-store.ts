/**
 * EventStore on EventStoreDB / KurrentDB through `@eventstore/db-client` (gRPC). Every import
 * of the client lives in this folder, so a move to `@kurrent/kurrentdb-client` stays local.
 *
 * - Connection strings: `esdb://` (or `esdb+discover://`) only; 6.2.1 knows no other scheme.
 * - Expected revisions map one to one: 'any' → ANY, 'no_stream' → NO_STREAM,
 *   'stream_exists' → STREAM_EXISTS, n → BigInt(n) (never -1n); a WrongExpectedVersionError
 *   becomes WrongExpectedRevisionError with the actual revision (-1 for no stream).
 * - Append size: an append over the port's MAX_APPEND_BYTES (EventStoreDB's default
 *   `MaxAppendSize`, measured as the server does) is refused with EventTooLargeError before
 *   anything is sent; a server set lower answers MaxAppendSizeExceededError, mapped to the same.
 * - Idempotent retries: before writing, the stream's last `events.length` events are read; when
 *   their ids are exactly the appended ids the stored result is returned and nothing is
 *   written; when only some ids are there the append is refused. After a conflict the tail is
 *   read again, so a concurrent identical retry also succeeds. (EventStoreDB's own id check
 *   would absorb most retries, but it is best effort for ANY and its answer to an idempotent
 *   write does not carry the stored position.) The cost is one small read per append.
 * - Positions: the commit position, see records.ts. `readAll({after})` and `subscribe({after})`
 *   take 0n or a position this adapter returned.
 * - A missing stream throws StreamNotFoundError while iterating a read, not when the read is
 *   created: reads are collected inside try/catch and a missing stream reads as [].
 * - `readAll` filters client-side (6.2.1 has no server-side filter for reads), skipping
 *   EventStoreDB's own events; `subscribe` filters server-side by stream prefix.
 * - `readStreamsWithPrefix` has no index to use either: a client-side filtered `$all` read,
 *   streams interleaved in commit order (each one still in revision order).
 */
import {
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  ANY,
  MaxAppendSizeExceededError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type Position,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  appendSize,
  assertAppendFits,
  awaitPrecedingAppend,
  EventTooLargeError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
  expectationHolds,
  requireStreamName,
} from '../../ports/event-store.js';
import {
  comparePositions,
  eventIdsOf,
  fullPosition,
  isCommandErrorOf,
  isSystemEvent,
  matchesPrefixes,
  toEsdbPosition,
  toEventData,
  toRecordedEvent,
  validExpectedRevision,
  type ClientRecordedEvent,
} from './records.js';
import { createEsdbSubscription, type SubscriptionDrop } from './subscription.js';
import { translateRejections } from '../translate-rejections.js';
import { unavailableOnConnectionFailure } from './connection-failure.js';

export interface EsdbEventStoreOptions {
  /** e.g. `esdb://localhost:2113?tls=false` (insecure single node) or `esdb+discover://…`. */
  connectionString: string;
  /** Default upper bound of one subscription batch. Default 500. */
  batchSize?: number;
  /** Backoff bounds for resubscribing a dropped subscription (ms). Defaults 100 and 5000. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Told about each dropped subscription before it is resubscribed (for logs). */
  onSubscriptionDrop?(drop: SubscriptionDrop): void;
  /** Deadline of ping() (ms). Default 5000. */
  pingTimeoutMs?: number;
}

export type { SubscriptionDrop } from './subscription.js';

/** Events read per request when readAll/headPosition page through `$all`. */
const PAGE = 512;

export function createEsdbEventStore(options: EsdbEventStoreOptions): EventStore {
  const client = EventStoreDBClient.connectionString(requireEsdbConnectionString(options.connectionString));
  return esdbEventStoreOnClient(client, options);
}

/** The adapter on a client made elsewhere (the tests use an in-memory stand-in); close() disposes it. */
export function esdbEventStoreOnClient(client: EventStoreDBClient, options: Omit<EsdbEventStoreOptions, 'connectionString'> = {}): EventStore {
  const defaultBatchSize = Math.max(1, Math.trunc(options.batchSize ?? 500));
  const subscriptions = new Set<Subscription>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new Error('event store is closed');
  }

  /** The last `count` events of a stream in revision order; [] when the stream does not exist. */
  async function readTail(streamName: string, count: number): Promise<RecordedEvent[]> {
    const read = client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: count });
    return (await collectStream(read)).reverse();
  }

  function storedResult(tail: readonly RecordedEvent[], ids: readonly string[]): AppendResult | undefined {
    const last = tail.at(-1);
    if (!last || ids.length === 0 || tail.length !== ids.length) return undefined;
    if (!tail.every((event, index) => event.id === ids[index])) return undefined;
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  /** `$all` forwards from an inclusive position, one page at a time, without EventStoreDB's own events. */
  async function* pagesOfAll(from: Position | typeof START): AsyncGenerator<ClientRecordedEvent[]> {
    let cursor: Position | undefined;
    for (;;) {
      const page = await collectAll(client.readAll({ direction: FORWARDS, fromPosition: cursor ?? from, maxCount: PAGE, resolveLinkTos: false }));
      const events: ClientRecordedEvent[] = [];
      let fresh = 0;
      for (const resolved of page) {
        const event = resolved.event;
        const position = event && fullPosition(event);
        if (!event || !position || (cursor && comparePositions(position, cursor) <= 0)) continue;
        cursor = position;
        fresh += 1;
        if (!isSystemEvent(event)) events.push(event);
      }
      yield events;
      if (page.length < PAGE || fresh === 0) return;
    }
  }

  /**
   * The fallback the client allows: 6.2.1's `readAll` takes no filter (only `subscribeToAll`
   * does) and EventStoreDB has no stream-name range read, so this reads `$all` forwards and
   * keeps the events of matching streams, filtered before they are decoded. `$all` is in commit
   * order, which within a stream is revision order: each stream comes complete and in order,
   * interleaved with the others, as the port allows.
   */
  async function* streamsWithPrefix(prefix: string, pageSize: number): AsyncGenerator<RecordedEvent[]> {
    let found: RecordedEvent[] = [];
    for await (const events of pagesOfAll(START)) {
      assertOpen();
      for (const event of events) {
        if (!event.streamId.startsWith(prefix)) continue;
        found.push(toRecordedEvent(event));
        if (found.length === pageSize) {
          yield found;
          found = [];
        }
      }
    }
    if (found.length > 0) yield found;
  }

  const store: EventStore = {
    async append(streamName, events, appendOptions) {
      assertOpen();
      const stream = requireStreamName(streamName);
      const expected = validExpectedRevision(appendOptions?.expectedRevision ?? 'any');
      const ids = eventIdsOf(events);
      const data = events.map(toEventData);
      // Measured here as the server measures it, so a too-large append costs no round trip.
      assertAppendFits(stream, appendSize(events));
      // No transaction spans two appends here: the one this follows is simply done first.
      await awaitPrecedingAppend(stream, appendOptions);

      const tail = await readTail(stream, Math.max(1, ids.length));
      const current = tail.at(-1)?.revision ?? -1;
      const stored = storedResult(tail, ids);
      if (stored) return stored;
      if (ids.length === 0) {
        if (!expectationHolds(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current);
        return { nextExpectedRevision: current, position: tail.at(-1)?.position ?? 0n };
      }
      if (tail.some((event) => ids.includes(event.id))) throw new WrongExpectedRevisionError(stream, expected, current);

      let written;
      try {
        written = await client.appendToStream(stream, data, { expectedRevision: toEsdbExpectedRevision(expected) });
      } catch (error) {
        // A server configured with a smaller MaxAppendSize than the port's: the same refusal.
        if (error instanceof MaxAppendSizeExceededError) throw new EventTooLargeError(stream, appendSize(events), error.maxAppendSize);
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        const retried = storedResult(await readTail(stream, ids.length), ids);
        if (retried) return retried;
        throw new WrongExpectedRevisionError(stream, expected, error.actualVersion === NO_STREAM ? -1 : Number(error.actualVersion));
      }
      if (!written.success) {
        throw new WrongExpectedRevisionError(stream, expected, Number(written.nextExpectedRevision));
      }
      const nextExpectedRevision = Number(written.nextExpectedRevision);
      const position = written.position?.commit ?? (await readTail(stream, 1)).at(-1)?.position;
      if (position === undefined) throw new Error(`EventStoreDB returned no position for the append to ${stream}`);
      return { nextExpectedRevision, position };
    },

    async readStream(streamName, readOptions = {}) {
      assertOpen();
      const maxCount = readOptions.maxCount === undefined ? undefined : Math.max(0, Math.trunc(readOptions.maxCount));
      if (maxCount === 0) return [];
      const limit = maxCount === undefined ? {} : { maxCount };
      const backwards = readOptions.direction === 'backwards';
      const revision = readOptions.fromRevision === undefined ? undefined : Math.trunc(readOptions.fromRevision);
      // EventStoreDB reads backwards natively, newest first, from END or an inclusive revision.
      if (backwards && revision !== undefined && revision < 0) return [];
      const fromRevision = backwards ? (revision === undefined ? END : BigInt(revision)) : BigInt(Math.max(0, revision ?? 0));
      return collectStream(client.readStream(requireStreamName(streamName), { direction: backwards ? BACKWARDS : FORWARDS, fromRevision, ...limit }));
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<RecordedEvent[]> {
      assertOpen();
      const after = readOptions.after ?? 0n;
      const maxCount = readOptions.maxCount === undefined ? Infinity : Math.max(0, Math.trunc(readOptions.maxCount));
      const prefixes = readOptions.streamPrefixes ?? [];
      const found: RecordedEvent[] = [];
      if (maxCount === 0) return found;
      for await (const events of pagesOfAll(after > 0n ? toEsdbPosition(after) : START)) {
        for (const recorded of events) {
          const event = toRecordedEvent(recorded);
          if (event.position > after && matchesPrefixes(event.streamName, prefixes)) found.push(event);
          if (found.length >= maxCount) return found;
        }
      }
      return found;
    },

    readStreamsWithPrefix(prefix, readOptions = {}) {
      assertOpen();
      return streamsWithPrefix(prefix, Math.max(1, Math.trunc(readOptions.pageSize ?? 1000)));
    },

    async headPosition() {
      assertOpen();
      // The last event that is not EventStoreDB's own (statistics, metadata, links).
      let from: Position | typeof END = END;
      for (;;) {
        const page = await collectAll(client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: PAGE, resolveLinkTos: false }));
        for (const resolved of page) {
          const event = resolved.event;
          if (event && !isSystemEvent(event)) return toRecordedEvent(event).position;
        }
        const oldest = page.at(-1)?.event;
        const position = oldest && fullPosition(oldest);
        if (page.length < PAGE || !position) return 0n;
        from = position;
      }
    },

    subscribe(subscribeOptions: SubscribeOptions = {}): Subscription {
      assertOpen();
      const subscription = createEsdbSubscription({
        client,
        after: subscribeOptions.after,
        prefixes: [...(subscribeOptions.streamPrefixes ?? [])],
        batchSize: Math.max(1, Math.trunc(subscribeOptions.batchSize ?? defaultBatchSize)),
        reconnectMinMs: options.reconnectMinMs ?? 100,
        reconnectMaxMs: options.reconnectMaxMs ?? 5000,
        ...(options.onSubscriptionDrop ? { onDrop: options.onSubscriptionDrop } : {}),
        onClose: () => subscriptions.delete(subscription),
      });
      subscriptions.add(subscription);
      return subscription;
    },

    async ping() {
      assertOpen();
      await collectAll(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, deadline: options.pingTimeoutMs ?? 5000 }));
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      await client.dispose();
    },
  };
  // A dropped connection or an unreachable server is StoreUnavailableError, whatever the call.
  return translateRejections(store, unavailableOnConnectionFailure);
}

function requireEsdbConnectionString(connectionString: string): string {
  if (typeof connectionString !== 'string' || !/^esdb(\+discover)?:\/\//.test(connectionString)) {
    throw new TypeError(
      'EventStoreDB connection string must start with esdb:// or esdb+discover:// ' +
        '(e.g. esdb://localhost:2113?tls=false); @eventstore/db-client 6 accepts no other scheme',
    );
  }
  return connectionString;
}

function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return BigInt(expected);
  }
}

/** Drains a stream read; a missing stream (thrown while iterating) reads as []. */
async function collectStream(read: StreamingRead<ResolvedEvent>): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  try {
    for await (const resolved of read) {
      if (resolved.event) events.push(toRecordedEvent(resolved.event));
    }
  } catch (error) {
    if (isCommandErrorOf(error, ErrorType.STREAM_NOT_FOUND)) return [];
    throw error;
  }
  return events;
}

async function collectAll(read: StreamingRead<AllStreamResolvedEvent>): Promise<AllStreamResolvedEvent[]> {
  const events: AllStreamResolvedEvent[] = [];
  for await (const resolved of read) events.push(resolved);
  return events;
}
