/**
 * Embedded EventStore on a SQLite file. Appends made in the same tick commit together in one
 * transaction (group commit, one fsync); each is checked on its own. Subscriptions wake on this
 * process's commits and poll for other processes' commits on the same file.
 */
import {
  assertAppendFits,
  awaitPrecedingAppend,
  requireStreamName,
  serializedAppendSize,
  type AppendResult,
  type EventStore,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';
import { recordedEvent, serializeEvents, validExpectedRevision } from '../event-json.js';
import { prepareAppendBatch, type AppendJob, type WrittenEvent } from './append-batch.js';
import { createChangeNotifier } from '../change-notifier.js';
import { openSqlite } from './database.js';
import { EVENTS_SCHEMA, prepareEventQueries, sqlLimit, toRecordedEvent } from './event-rows.js';
import { createGroupCommit } from './group-commit.js';
import { createQueuedAppends } from './queued-appends.js';
import { createRecentEvents } from './recent-events.js';
import { prepareStreamsWithPrefixRead } from './stream-prefix-read.js';
import { createCatchUpSubscription, type BatchRead } from '../catch-up-subscription.js';

/** Events kept decoded after their commit: more than a busy second's worth, a few MiB. */
const RECENT_EVENTS_KEPT = 4096;

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
  const recent = createRecentEvents(RECENT_EVENTS_KEPT);
  const subscriptions = new Set<Subscription>();
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const defaultBatchSize = options.batchSize ?? 500;
  const pingStatement = db.prepare('SELECT 1');
  const stats: GroupCommitStats = { transactions: 0, appends: 0 };
  let closed = false;

  const queuedAppends = createQueuedAppends();
  const groupCommit = createGroupCommit<AppendJob, AppendResult>((jobs) => {
    queuedAppends.batchTaken();
    const { outcomes, wrote, written } = appendBatch(jobs);
    stats.transactions += 1;
    stats.appends += jobs.length;
    recent.add(written.map(toRecentEvent));
    if (wrote) queueMicrotask(() => notifier.notify());
    return outcomes;
  });

  /** Events in (after, upTo]: from the ones this process just committed when it holds them all, else from SQLite. */
  function readRange(after: bigint, upTo: bigint, limit: number, prefixes: readonly string[]): RecordedEvent[] {
    return recent.read(after, upTo, limit, prefixes) ?? queries.readRange(after, upTo, limit, prefixes).map(toRecordedEvent);
  }

  function assertOpen(): void {
    if (closed) throw new Error('event store is closed');
  }

  function readBatch(after: bigint, batchSize: number, prefixes: readonly string[]): BatchRead {
    // Read the head first and bound the range by it: every position at or below the head is
    // final, so moving the cursor there can never skip a later commit.
    const head = queries.head();
    const events = readRange(after, head, batchSize, prefixes);
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
      // Up to the head read first: every position at or below it is final (what an open range reads too).
      return readRange(readOptions.after ?? 0n, queries.head(), sqlLimit(readOptions.maxCount), readOptions.streamPrefixes ?? []);
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

function toRecentEvent({ stream, revision, position, event }: WrittenEvent): RecordedEvent {
  return recordedEvent(stream, event.id, event.type, event.data, event.metadata, revision, position);
}
