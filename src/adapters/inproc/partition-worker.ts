/**
 * Consumes one partition of one topic for one group member, sequentially: read a batch from the
 * committed offset, await the handler for each message, commit the offset after the last one
 * handled, repeat; sleep until woken when the partition is drained. A handler that throws gets
 * the same message again after a short, growing backoff — until it succeeds or the partition is
 * taken away (then it stays uncommitted and its next owner receives it: at-least-once).
 */
import type { DeliveredMessage } from '../../ports/bus.js';
import type { BusLog, LoggedMessage } from './bus-log.js';

export interface PartitionWorkerOptions {
  log: BusLog;
  topic: string;
  groupId: string;
  partition: number;
  fromBeginning: boolean;
  handle(message: DeliveredMessage): Promise<void>;
  /** Registers a callback run when the partition gets new messages; returns the unregister. */
  subscribe(wake: () => void): () => void;
}

export interface PartitionWorker {
  /** Stops after the in-flight message (if any) finishes; resolves once the loop has ended. */
  stop(): Promise<void>;
}

const BATCH = 100;
const BACKOFF_MIN_MS = 50;
const BACKOFF_MAX_MS = 500;

function delivered(topic: string, m: LoggedMessage): DeliveredMessage {
  const message: DeliveredMessage = { id: m.id, key: m.key, value: m.value, topic, partition: m.partition, offset: BigInt(m.offset) };
  if (m.headers !== undefined) message.headers = m.headers;
  return message;
}

export function startPartitionWorker(o: PartitionWorkerOptions): PartitionWorker {
  let stopped = false;
  /** Ends the wait for new messages (a publish or stop). */
  let wakeIdle: (() => void) | undefined;
  /** Ends a backoff pause early (stop only, so a stream of publishes cannot shorten a backoff). */
  let endPause: (() => void) | undefined;
  const onPublish = (): void => {
    const resolve = wakeIdle;
    wakeIdle = undefined;
    resolve?.();
  };
  const unsubscribe = o.subscribe(onPublish);
  const idle = (): Promise<void> => new Promise<void>((resolve) => (wakeIdle = resolve));
  const pause = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      endPause = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (endPause = undefined));

  function startOffset(): number {
    const committed = o.log.committed(o.groupId, o.topic, o.partition);
    if (committed !== undefined) return committed;
    if (o.fromBeginning) return 0;
    // 'latest' is fixed as soon as the group first owns the partition, so a message published
    // before the first commit is not skipped when ownership moves to another member.
    const end = o.log.endOffset(o.topic, o.partition);
    o.log.commit(o.groupId, o.topic, o.partition, end);
    return end;
  }

  /** true once handled; false when stopped before the message could be handled. */
  async function deliver(message: DeliveredMessage): Promise<boolean> {
    let backoff = BACKOFF_MIN_MS;
    for (;;) {
      try {
        await o.handle(message);
        return true;
      } catch {
        if (stopped) return false;
        await pause(backoff);
        if (stopped) return false;
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
  }

  async function run(): Promise<void> {
    let next: number | undefined;
    let backoff = BACKOFF_MIN_MS;
    while (!stopped) {
      try {
        next ??= startOffset();
        const batch = o.log.read(o.topic, o.partition, next, BATCH);
        if (batch.length === 0) {
          await idle();
          continue;
        }
        let handled = next;
        try {
          for (const m of batch) {
            if (stopped || !(await deliver(delivered(o.topic, m)))) break;
            handled = m.offset + 1;
          }
        } finally {
          // One commit for what the batch handled, also when it stops midway: fewer commits,
          // and a crash before it only delivers those messages again (at-least-once).
          if (handled !== next) o.log.commit(o.groupId, o.topic, o.partition, handled);
          next = handled;
        }
        backoff = BACKOFF_MIN_MS;
      } catch {
        // The log failed (read or commit): retry from the last committed position in memory;
        // a message whose commit failed is delivered again (at-least-once).
        await pause(backoff);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
  }

  const done = run().finally(unsubscribe);

  return {
    stop(): Promise<void> {
      stopped = true;
      onPublish();
      endPause?.();
      return done;
    },
  };
}
