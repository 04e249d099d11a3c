/**
 * EventStore on PostgreSQL. Appends of one process go in group-commit batches, one transaction
 * each (append-queue.ts, append-batch.ts); every writer of the database takes the same write
 * lock, so positions are contiguous and in commit order across processes (event-rows.ts).
 * Subscriptions read in position order and wake on this process's commits at once, on other
 * processes' through LISTEN/NOTIFY, and poll as a fall-back.
 */
import {
  assertAppendFits,
  awaitPrecedingAppend,
  requireStreamName,
  serializedAppendSize,
  type EventStore,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';
import { createCatchUpSubscription } from '../catch-up-subscription.js';
import { createChangeNotifier } from '../change-notifier.js';
import { serializeEvents, validExpectedRevision } from '../event-json.js';
import { appendBatch } from './append-batch.js';
import type { AppendJob } from './append-decision.js';
import { createAppendQueue } from './append-queue.js';
import { ensureSchema, openPool, schemaName, type PostgresOptions } from './database.js';
import { createEventReads } from './event-reads.js';
import { EVENTS_DDL, sqlLimit } from './event-rows.js';
import { createCommitListener } from './notifications.js';
import { translateRejections } from '../translate-rejections.js';
import { unavailableOnConnectionFailure } from './connection-failure.js';

export interface PostgresEventStoreOptions extends PostgresOptions {
  /** How often live subscriptions look for appends should a notification be missed (ms). */
  pollIntervalMs?: number;
  /** Default upper bound of one subscription batch. */
  batchSize?: number;
}

export function createPostgresEventStore(options: PostgresEventStoreOptions): EventStore {
  const schema = schemaName(options);
  const pool = openPool(options);
  // Every call waits for the tables; a failure to create them fails each call, with its cause.
  const ready = ensureSchema(pool, schema, EVENTS_DDL);
  ready.catch(() => undefined);
  const notifier = createChangeNotifier();
  const listener = createCommitListener(options.url, schema, notifier);
  const subscriptions = new Set<Subscription>();
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const defaultBatchSize = options.batchSize ?? 500;
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new Error('event store is closed');
  }
  const reads = createEventReads(pool, async () => {
    assertOpen();
    await ready;
  });
  const appends = createAppendQueue(async (jobs) => {
    await ready;
    const decision = await appendBatch(pool, schema, jobs);
    if (decision.rows.length > 0) notifier.notify();
    return decision.outcomes;
  });

  const store: EventStore = {
    async append(streamName, events, appendOptions) {
      assertOpen();
      const job: AppendJob = {
        stream: requireStreamName(streamName),
        events: serializeEvents(events),
        expected: validExpectedRevision(appendOptions?.expectedRevision ?? 'any'),
      };
      assertAppendFits(job.stream, serializedAppendSize(job.events));
      // The append it follows is committed (in an earlier batch) before this one is queued.
      await awaitPrecedingAppend(job.stream, appendOptions);
      assertOpen();
      return appends.enqueue(job);
    },

    async readStream(streamName, readOptions = {}) {
      if (readOptions.direction === 'backwards') {
        const from = readOptions.fromRevision === undefined ? Number.MAX_SAFE_INTEGER : Math.trunc(readOptions.fromRevision);
        if (from < 0) {
          assertOpen();
          return [];
        }
        return reads.readStreamBackwards(streamName, from, sqlLimit(readOptions.maxCount));
      }
      return reads.readStream(streamName, Math.max(0, Math.trunc(readOptions.fromRevision ?? 0)), sqlLimit(readOptions.maxCount));
    },

    async readAll(readOptions = {}) {
      return (await reads.readRange(readOptions.after ?? 0n, sqlLimit(readOptions.maxCount), readOptions.streamPrefixes ?? [])).events;
    },

    readStreamsWithPrefix(prefix, readOptions = {}) {
      return reads.streamsWithPrefix(prefix, Math.max(1, Math.trunc(readOptions.pageSize ?? 1000)));
    },

    headPosition() {
      return reads.head();
    },

    subscribe(subscribeOptions: SubscribeOptions = {}): Subscription {
      assertOpen();
      listener.start();
      const prefixes = [...(subscribeOptions.streamPrefixes ?? [])];
      const batchSize = Math.max(1, Math.trunc(subscribeOptions.batchSize ?? defaultBatchSize));
      const subscription = createCatchUpSubscription({
        after: subscribeOptions.after ?? 0n,
        read: async (after) => {
          const { events, head } = await reads.readRange(after, batchSize, prefixes);
          const last = events.at(-1);
          return { events, scannedTo: events.length === batchSize && last ? last.position : head };
        },
        notifier,
        pollIntervalMs,
        onClose: () => subscriptions.delete(subscription),
      });
      subscriptions.add(subscription);
      return subscription;
    },

    async ping() {
      assertOpen();
      await pool.query('SELECT 1');
    },

    async close() {
      if (closed) return;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      // Appends already accepted are committed (or fail) before the connections go.
      await appends.drained();
      closed = true;
      await listener.close();
      await ready.catch(() => undefined);
      await pool.end();
    },
  };
  // A dropped connection or an unreachable server is StoreUnavailableError, whatever the call.
  return translateRejections(store, unavailableOnConnectionFailure);
}
