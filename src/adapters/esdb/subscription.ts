/**
 * A catch-up subscription to `$all` (server-side stream-prefix filter), turned into the port's
 * pull-based AsyncIterable of non-empty batches, that survives dropped connections.
 *
 * `subscribeToAll` does not resubscribe by itself: when its stream errors or ends, this
 * resubscribes from the position of the last event it accepted, with exponential backoff, and
 * drops anything at or below that position, so no event is delivered twice and none is
 * skipped. Accepted events wait in a bounded queue (the client stream is paused above a high
 * water mark, gRPC flow control does the rest); each `next()` takes up to `batchSize` of them.
 * The `data` listener only pushes into the queue synchronously: the consumer pulls with
 * `for await` and finishes a batch (and its checkpoint) before it sees the next.
 */
import {
  ErrorType,
  START,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  type Position,
} from '@eventstore/db-client';
import type { RecordedEvent, Subscription } from '../../ports/event-store.js';
import { comparePositions, fullPosition, isCommandErrorOf, isSystemEvent, matchesPrefixes, toEsdbPosition, toRecordedEvent } from './records.js';
import { pullSubscription } from '../pull-subscription.js';
import { backoffDelay } from '../../lib/backoff.js';

export interface SubscriptionDrop {
  error: unknown;
  /** Consecutive drops without an event or confirmation in between. */
  attempt: number;
  /** Wait before resubscribing. */
  delayMs: number;
}

export interface EsdbSubscriptionOptions {
  client: EventStoreDBClient;
  /** Exclusive start (a checkpoint); undefined or 0n = from the beginning of `$all`. */
  after: bigint | undefined;
  prefixes: readonly string[];
  batchSize: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  onDrop?(drop: SubscriptionDrop): void;
  onClose(): void;
}

/** Errors that resubscribing cannot fix: they end the iteration instead. */
const FATAL = [ErrorType.ACCESS_DENIED, ErrorType.INVALID_ARGUMENT, ErrorType.UNSUPPORTED];

/** gRPC status INVALID_ARGUMENT. */
const GRPC_INVALID_ARGUMENT = 3;

/**
 * The server's answer to a read of `$all` from a position that is not a record's own (inside a
 * record, or past the end of the log): its read handlers catch InvalidReadException /
 * UnableToReadPastEndOfStreamException as `ReadAllResult.InvalidPosition`, and the gRPC layer
 * sends `RpcExceptions.InvalidPositionException()` = status INVALID_ARGUMENT, "Trying to read
 * from an invalid position.", without the `exception` metadata the client maps to its own error
 * types, so `convertToCommandError` makes it an UnknownError carrying code 3. Resubscribing from
 * the same position would fail the same way, for ever.
 */
function isInvalidPosition(error: unknown): boolean {
  return isCommandErrorOf(error, ErrorType.UNKNOWN) && (error as { code?: unknown }).code === GRPC_INVALID_ARGUMENT;
}

export function createEsdbSubscription(o: EsdbSubscriptionOptions): Subscription {
  const queue: RecordedEvent[] = [];
  const highWater = Math.max(2 * o.batchSize, 64);
  /** Position of the last accepted event (or the caller's start): everything at or below it is dropped. */
  let cursor: Position | undefined = o.after !== undefined && o.after > 0n ? toEsdbPosition(o.after) : undefined;
  /**
   * Where the next subscription starts: the cursor, until the server refuses the caller's start
   * as not a record's position (a client's Last-Event-ID between events, or a checkpoint past
   * this log's end); then the beginning, and `cursor` still drops what is at or below it.
   */
  let fromStart = cursor === undefined;
  let current: AllStreamSubscription | undefined;
  let paused = false;
  let closed = false;
  let fatal: { error: unknown } | undefined;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;

  const notify = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };

  function accept(resolved: AllStreamResolvedEvent): void {
    const event = resolved.event;
    if (!event || isSystemEvent(event) || !matchesPrefixes(event.streamId, o.prefixes)) return;
    const position = fullPosition(event);
    if (!position || (cursor && comparePositions(position, cursor) <= 0)) return;
    queue.push(toRecordedEvent(event));
    cursor = position;
    fromStart = false;
    attempt = 0;
    notify();
  }

  function open(): void {
    if (closed) return;
    const subscription = o.client.subscribeToAll({
      fromPosition: fromStart || !cursor ? START : cursor,
      filter: o.prefixes.length > 0 ? streamNameFilter({ prefixes: [...o.prefixes] }) : excludeSystemEvents(),
      resolveLinkTos: false,
    });
    current = subscription;
    paused = false;
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      if (subscription !== current) return;
      try {
        accept(resolved);
      } catch (error) {
        dropped(subscription, error);
        return;
      }
      if (queue.length >= highWater && !paused) {
        paused = true;
        subscription.pause();
      }
    });
    subscription.on('confirmation', () => {
      if (subscription === current) attempt = 0;
    });
    subscription.on('error', (error: Error) => dropped(subscription, error));
    subscription.on('end', () => dropped(subscription, new Error('EventStoreDB ended the subscription')));
    subscription.on('close', () => dropped(subscription, new Error('EventStoreDB subscription closed')));
  }

  function dropped(subscription: AllStreamSubscription, error: unknown): void {
    if (subscription !== current) return;
    current = undefined;
    void subscription.unsubscribe().catch(() => undefined);
    if (closed) return;
    if (isInvalidPosition(error) && !fromStart) {
      // Only the caller's own start can be such a position (every later cursor is an event's):
      // read from the beginning instead, at once; a second refusal is fatal like any other.
      fromStart = true;
      open();
      return;
    }
    if (isCommandErrorOf(error, ...FATAL) || isInvalidPosition(error)) {
      fatal = { error };
      notify();
      return;
    }
    const delayMs = backoffDelay({ initialMs: o.reconnectMinMs, maxMs: o.reconnectMaxMs, maxDoublings: 20 }, attempt);
    attempt += 1;
    o.onDrop?.({ error, attempt, delayMs });
    timer = setTimeout(() => {
      timer = undefined;
      open();
    }, delayMs);
  }

  async function pull(): Promise<IteratorResult<RecordedEvent[]>> {
    for (;;) {
      if (closed) return { done: true, value: undefined };
      if (queue.length > 0) {
        const batch = queue.splice(0, o.batchSize);
        if (paused && queue.length < o.batchSize && current) {
          paused = false;
          current.resume();
        }
        return { done: false, value: batch };
      }
      if (fatal) throw fatal.error;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (timer) clearTimeout(timer);
    const subscription = current;
    current = undefined;
    notify();
    o.onClose();
    await subscription?.unsubscribe().catch(() => undefined);
  }

  open();
  return pullSubscription(pull, close);
}
