/**
 * Topics exist with exactly the bus's partition count before anything is published to or
 * consumed from them. `partitionOf(key)` must name the partition a keyed message really lands
 * in (work ownership follows partitions), so a topic that exists with another count is an
 * error, reported loudly, never silently used. Auto-creation is off everywhere in this adapter;
 * topics are created here with `admin.createTopics`.
 */
import type { Admin } from 'kafkajs';

export interface TopicGuard {
  /** Resolves once the topic exists with the configured partition count; cached per topic. */
  ensure(topic: string): Promise<void>;
}

export class TopicPartitionMismatchError extends Error {
  constructor(
    readonly topic: string,
    readonly actual: number,
    readonly expected: number,
  ) {
    super(
      `Kafka topic ${topic} has ${actual} partitions but the bus is configured with ${expected}: ` +
        'partitionOf() would not match where Kafka puts messages. Recreate the topic with ' +
        `${expected} partitions or configure the bus with ${actual}.`,
    );
    this.name = 'TopicPartitionMismatchError';
  }
}

export function createTopicGuard(admin: () => Promise<Admin>, partitions: number, replicationFactor: number | undefined): TopicGuard {
  const ready = new Map<string, Promise<void>>();

  async function ensure(topic: string): Promise<void> {
    const client = await admin();
    // Only a missing topic is created: CreateTopics on an existing one makes kafkajs log an
    // error on every start, and fails outright where the client may not create topics (topics
    // made by operators) although they exist with the right count.
    // createTopics resolves false when another client created it first (kafkajs maps TOPIC_ALREADY_EXISTS).
    if (!(await client.listTopics()).includes(topic)) {
      await client.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: partitions, ...(replicationFactor === undefined ? {} : { replicationFactor }) }],
      });
    }
    const { topics } = await client.fetchTopicMetadata({ topics: [topic] });
    const actual = topics.find((t) => t.name === topic)?.partitions.length ?? 0;
    if (actual !== partitions) throw new TopicPartitionMismatchError(topic, actual, partitions);
  }

  return {
    ensure(topic) {
      let pending = ready.get(topic);
      if (!pending) {
        pending = ensure(topic);
        ready.set(topic, pending);
        // A failure is not cached: the next call checks again.
        pending.catch(() => ready.delete(topic));
      }
      return pending;
    },
  };
}
