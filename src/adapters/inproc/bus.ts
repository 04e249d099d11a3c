/**
 * The embedded Bus: an in-process bus whose log and consumer-group offsets live in one SQLite
 * file, so a group resumes after a restart where it left off. Partitioning, ordering, groups and
 * rebalancing behave like Kafka's (see consumer-group.ts); delivery is at-least-once.
 * One process per file: group membership is held in memory, not in the file.
 */
import { checkConsumer, checkMessage, requireNonEmpty, requirePartitionCount, type Bus, type Consumer, type ConsumerOptions } from '../../ports/bus.js';
import { openBusLog } from './bus-log.js';
import { createConsumerGroup, type ConsumerGroup } from './consumer-group.js';
import { partitionForKey } from './murmur2.js';
import { startPartitionWorker } from './partition-worker.js';

export interface InprocBusOptions {
  /** SQLite file of the log (created if missing); ':memory:' for a log that dies with the bus. */
  path: string;
  /** Partitions of every topic. Default 16. */
  partitions?: number;
}

export function createInprocBus({ path, partitions = 16 }: InprocBusOptions): Bus {
  requirePartitionCount(partitions);
  const log = openBusLog(path);
  const groups = new Map<string, ConsumerGroup>();
  const listeners = new Map<string, Set<() => void>>();
  let closing: Promise<void> | undefined;

  const slot = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
  const assertOpen = (): void => {
    if (closing) throw new Error('bus is closed');
  };

  function subscribe(topic: string, partition: number, wake: () => void): () => void {
    const key = slot(topic, partition);
    const set = listeners.get(key) ?? new Set<() => void>();
    listeners.set(key, set);
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
    };
  }

  function groupOf(topic: string, groupId: string): ConsumerGroup {
    const key = `${topic}\u0000${groupId}`;
    let group = groups.get(key);
    if (!group) {
      group = createConsumerGroup({
        partitions,
        startWorker: (partition, options: ConsumerOptions) =>
          startPartitionWorker({
            log,
            topic,
            groupId,
            partition,
            fromBeginning: options.fromBeginning !== false,
            handle: (message) => options.handle(message),
            subscribe: (wake) => subscribe(topic, partition, wake),
          }),
      });
      groups.set(key, group);
    }
    return group;
  }

  const partitionOf = (key: string): number => partitionForKey(key, partitions);

  return {
    partitions,
    partitionOf,

    async publish(topic, messages) {
      assertOpen();
      requireNonEmpty(topic, 'topic');
      if (messages.length === 0) return;
      for (const m of messages) checkMessage(m);
      const logged = log.append(
        topic,
        messages.map((m) => ({ ...m, partition: partitionOf(m.key) })),
      );
      for (const partition of new Set(logged.map((m) => m.partition))) {
        for (const wake of [...(listeners.get(slot(topic, partition)) ?? [])]) wake();
      }
    },

    async consume(options): Promise<Consumer> {
      assertOpen();
      requireNonEmpty(options.topic, 'topic');
      checkConsumer(options);
      const group = groupOf(options.topic, options.groupId);
      const member = await group.join(options);
      let leaving: Promise<void> | undefined;
      return {
        close: () => (leaving ??= group.leave(member)),
      };
    },

    async ping() {
      assertOpen();
      log.ping();
    },

    close() {
      closing ??= (async () => {
        await Promise.all([...groups.values()].map((g) => g.leaveAll()));
        log.close();
      })();
      return closing;
    },
  };
}
