/**
 * Topics exist with exactly the bus's partition count before anything is published to or
 * consumed from them. `partitionOf(key)` must name the partition a keyed message really lands
 * in (work ownership follows partitions), so a topic that exists with another count is an
 * error, reported loudly, never silently used. Auto-creation is off everywhere in this adapter;
 * topics are created here with `admin.createTopics`.
 */
import type { Admin } from 'kafkajs';
import { retry, type Backoff } from '../../lib/backoff.js';

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

/** A topic's creation and metadata tried again: 100 ms doubling to 1 s, about 10 s in all. */
const METADATA_RETRY: Backoff = { initialMs: 100, maxMs: 1000 };
const METADATA_TRIES = 14;

class TopicNotVisibleYet extends Error {
  constructor(topic: string) {
    super(`Kafka topic ${topic} is not in the broker's metadata yet`);
  }
}

/** kafkajs marks the errors worth another try (KafkaJSError.retriable). */
const isRetriable = (err: unknown): boolean => (err as { retriable?: unknown } | undefined)?.retriable === true;

export function createTopicGuard(admin: () => Promise<Admin>, partitions: number, replicationFactor: number | undefined): TopicGuard {
  const ready = new Map<string, Promise<void>>();

  async function ensure(topic: string): Promise<void> {
    const client = await admin();
    // Tried again, whole, on the errors kafkajs marks retriable: while another client is creating
    // the same topic, the broker answers its metadata "This server does not host this
    // topic-partition", even to createTopics' own wait for leaders. Two projectors and two workers
    // starting together create the same topics, and the one that lost the race failed its start.
    const actual = await retry(
      async () => {
        // Only a missing topic is created: CreateTopics on an existing one makes kafkajs log an
        // error on every start, and fails outright where the client may not create topics (topics
        // made by operators) although they exist with the right count. createTopics resolves
        // false when another client created it first (kafkajs maps TOPIC_ALREADY_EXISTS).
        if (!(await client.listTopics()).includes(topic)) {
          await client.createTopics({
            waitForLeaders: true,
            topics: [{ topic, numPartitions: partitions, ...(replicationFactor === undefined ? {} : { replicationFactor }) }],
          });
        }
        const { topics } = await client.fetchTopicMetadata({ topics: [topic] });
        const count = topics.find((t) => t.name === topic)?.partitions.length ?? 0;
        if (count === 0) throw new TopicNotVisibleYet(topic);
        return count;
      },
      { backoff: METADATA_RETRY, retryIf: (err, attempt) => attempt < METADATA_TRIES && (err instanceof TopicNotVisibleYet || isRetriable(err)) },
    );
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
