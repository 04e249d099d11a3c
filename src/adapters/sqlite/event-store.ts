/**
 * Embedded EventStore on a SQLite file. Appends made in the same tick commit together in one
 * transaction (group commit, one fsync); each is checked on its own. Subscriptions wake on this
 * process's commits and poll for other processes' commits on the same file.
 */
import {
  assertAppendFits,
  awaitPrecedingAppend,
  serializedAppendSize,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';
import { prepareAppendBatch, type AppendJob, type SerializedEvent } from './append-batch.js';
import { createChangeNotifier } from './change-notifier.js';
import { openSqlite } from './database.js';
import { EVENTS_SCHEMA, MAX_POSITION, prepareEventQueries, sqlLimit, toJson, toRecordedEvent } from './event-rows.js';
import { createGroupCommit } from './group-commit.js';
import { createQueuedAppends } from './queued-appends.js';
import { prepareStreamsWithPrefixRead } from './stream-prefix-read.js';
import { createCatchUpSubscription, type BatchRead } from './subscription.js';

export interface SqliteEventStoreOptions {
  path: string;
  /** How often live subscriptions look for appends made by another process (ms). */
  pollIntervalMs?: number;
  /** Default upper bound of one subscription batch. */
  batchSize?: number;
}

export interface GroupCommitStats {
  /** Write transactions committed (each one fsync). */
  transactions: number;
  /** Append calls settled by those transactions. */
  appends: number;
}

export interface SqliteEventStore extends EventStore {
  /** Counters for benchmarks and tests: appends / transactions is the mean group size. */
  groupCommitStats(): GroupCommitStats;
}

export function createSqliteEventStore(options: SqliteEventStoreOptions): SqliteEventStore {
  const db = openSqlite(options.path);
  db.exec(EVENTS_SCHEMA);
  const queries = prepareEventQueries(db);
  const streamsWithPrefix = prepareStreamsWithPrefixRead(db, () => assertOpen());
  const appendBatch = prepareAppendBatch(db);
  const notifier = createChangeNotifier();
  const subscriptions = new Set<Subscription>();
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const defaultBatchSize = options.batchSize ?? 500;
  const pingStatement = db.prepare('SELECT 1');
  const stats: GroupCommitStats = { transactions: 0, appends: 0 };
  let closed = false;

  const queuedAppends = createQueuedAppends();
  const groupCommit = createGroupCommit<AppendJob, AppendResult>((jobs) => {
    queuedAppends.batchTaken();
    const { outcomes, wrote } = appendBatch(jobs);
    stats.transactions += 1;
    stats.appends += jobs.length;
    if (wrote) queueMicrotask(() => notifier.notify());
    return outcomes;
  });

  function assertOpen(): void {
    if (closed) throw new Error('event store is closed');
  }

  function readBatch(after: bigint, batchSize: number, prefixes: readonly string[]): BatchRead {
    // Read the head first and bound the range by it: every position at or below the head is
    // final, so moving the cursor there can never skip a later commit.
    const head = queries.head();
    const events = queries.readRange(after, head, batchSize, prefixes).map(toRecordedEvent);
    const last = events.at(-1);
    const scannedTo = events.length === batchSize && last ? last.position : head;
    return { events, scannedTo };
  }

  return {
    append(streamName, events, appendOptions) {
      let job: AppendJob;
      try {
        assertOpen();
        job = {
          stream: requireStreamName(streamName),
          events: serializeEvents(events),
          expected: validExpectedRevision(appendOptions?.expectedRevision ?? 'any'),
        };
        // SQLite would take it; EventStoreDB would not: the same limit everywhere (port).
        assertAppendFits(job.stream, serializedAppendSize(job.events));
      } catch (error) {
        // Refused before anything is queued: a rejection all the same, like every failed append.
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      const after = appendOptions?.after;
      if (!after) return queuedAppends.track(groupCommit.enqueue(job), job);
      // Right behind the append it follows, in the same transaction (one fsync for both); an
      // append already taken for commit (or not this store's) is waited for instead.
      const preceding = queuedAppends.stillQueued(after);
      if (preceding) {
        const dependent: AppendJob = { ...job, after: preceding };
        return queuedAppends.track(groupCommit.enqueue(dependent), dependent);
      }
      const waiting = job;
      return awaitPrecedingAppend(waiting.stream, appendOptions).then(() => {
        assertOpen();
        return groupCommit.enqueue(waiting);
      });
    },

    async readStream(streamName, readOptions = {}) {
      assertOpen();
      if (readOptions.direction === 'backwards') {
        const from = readOptions.fromRevision === undefined ? Number.MAX_SAFE_INTEGER : Math.trunc(readOptions.fromRevision);
        if (from < 0) return [];
        return queries.readStreamBackwards(streamName, from, sqlLimit(readOptions.maxCount)).map(toRecordedEvent);
      }
      const from = Math.max(0, Math.trunc(readOptions.fromRevision ?? 0));
      return queries.readStream(streamName, from, sqlLimit(readOptions.maxCount)).map(toRecordedEvent);
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<RecordedEvent[]> {
      assertOpen();
      const rows = queries.readRange(readOptions.after ?? 0n, MAX_POSITION, sqlLimit(readOptions.maxCount), readOptions.streamPrefixes ?? []);
      return rows.map(toRecordedEvent);
    },

    readStreamsWithPrefix(prefix, readOptions = {}) {
      assertOpen();
      return streamsWithPrefix(prefix, Math.max(1, Math.trunc(readOptions.pageSize ?? 1000)));
    },

    async headPosition() {
      assertOpen();
      return queries.head();
    },

    subscribe(subscribeOptions: SubscribeOptions = {}): Subscription {
      assertOpen();
      const prefixes = [...(subscribeOptions.streamPrefixes ?? [])];
      const batchSize = Math.max(1, Math.trunc(subscribeOptions.batchSize ?? defaultBatchSize));
      const subscription = createCatchUpSubscription({
        after: subscribeOptions.after ?? 0n,
        read: (after) => readBatch(after, batchSize, prefixes),
        notifier,
        pollIntervalMs,
        onClose: () => subscriptions.delete(subscription),
      });
      subscriptions.add(subscription);
      return subscription;
    },

    groupCommitStats: () => ({ ...stats }),

    async ping() {
      assertOpen();
      pingStatement.get();
    },

    async close() {
      if (closed) return;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      groupCommit.flushNow();
      closed = true;
      db.close();
    },
  };
}

function requireStreamName(streamName: string): string {
  if (typeof streamName !== 'string' || streamName.length === 0) {
    throw new TypeError('stream name must be a non-empty string');
  }
  return streamName;
}

function validExpectedRevision(expected: ExpectedRevision): ExpectedRevision {
  if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new TypeError(`expected revision must be a non-negative integer, got ${expected}`);
  }
  return expected;
}

function serializeEvents(events: readonly NewEvent[]): SerializedEvent[] {
  const ids = new Set<string>();
  return events.map((event) => {
    if (typeof event.id !== 'string' || event.id.length === 0) throw new TypeError('event id must be a non-empty string');
    if (ids.has(event.id)) throw new TypeError(`event id ${event.id} appears twice in one append`);
    ids.add(event.id);
    return { id: event.id, type: event.type, data: toJson(event.data), metadata: toJson(event.metadata) };
  });
}
