/**
 * Bus on Kafka through `kafkajs` 2.2.4, designed for at-least-once (the STYLE notes: kafkajs is
 * unmaintained and its idempotent producer experimental):
 *
 * - Producer: `idempotent: false`, one request in flight per broker (so a retried send cannot
 *   overtake the next one and reorder a partition), acks from all in-sync replicas. A send that
 *   failed after the broker stored it may be repeated: every message carries its dedup id in a
 *   header (messages.ts) and consumers dedupe by id.
 * - Partitions: set explicitly to `partitionOf(key)`, Kafka's murmur2 (src/adapters/inproc/
 *   murmur2.ts), on topics created with exactly `partitions` partitions (topics.ts; a topic
 *   with another count fails loudly). Automatic topic creation is off.
 * - Consumers: one kafkajs consumer per `consume()` call, offsets committed after the handler
 *   resolved, ownership surfaced through onAssign/onRevoke, CRASH handled (member.ts).
 *   `fromBeginning: false` fixes the group's start at the partitions' ends when it has no
 *   committed offset yet (group-start.ts, while the group has no members), as the in-process
 *   bus does, so messages published after the group first started are never skipped, even
 *   when a partition changes owner before its first commit.
 */
import { Kafka, Partitioners, logLevel, type LogEntry } from 'kafkajs';
import { checkConsumer, checkMessage, requirePartitionCount, type Bus, type BusMessage, type Consumer, type ConsumerOptions } from '../../ports/bus.js';
import { partitionForKey } from '../inproc/murmur2.js';
import { fixGroupStartAtEnd } from './group-start.js';
import { startMember, type MemberCrash } from './member.js';
import { checkTopic, ID_HEADER, toKafkaMessage } from './messages.js';
import { createTopicGuard } from './topics.js';

export { TopicPartitionMismatchError } from './topics.js';

/** Bytes of messages sent in one produce request (the broker's default limit is 1 MiB). */
const MAX_REQUEST_BYTES = 512 * 1024;

/** Consecutive runs of messages whose values and headers add up to at most `limit` bytes (a larger message goes alone). */
function byteChunks(messages: readonly BusMessage[], limit: number): BusMessage[][] {
  const chunks: BusMessage[][] = [];
  let current: BusMessage[] = [];
  let size = 0;
  for (const m of messages) {
    const bytes = Buffer.byteLength(m.value) + Buffer.byteLength(m.key) + Buffer.byteLength(m.id) + 64;
    if (current.length > 0 && size + bytes > limit) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(m);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
export type { MemberCrash } from './member.js';

export interface KafkaLogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  namespace: string;
  message: string;
  extra: Record<string, unknown>;
}

export interface KafkaBusOptions {
  /** `host:port` list, or the comma-separated KAFKA_BROKERS string. */
  brokers: string | readonly string[];
  clientId: string;
  /** Partitions of every topic; must equal an existing topic's count. */
  partitions: number;
  /**
   * Put before every topic and group name on the broker, so deployments sharing a broker stay
   * apart; callers and handlers see the plain names. Default none.
   */
  namePrefix?: string;
  /** Replication factor of topics this bus creates. Default: the broker's default. */
  replicationFactor?: number;
  /** Consumer group timing (ms). Defaults: session 30000, rebalance 60000, heartbeat 1000, fetch wait 1000. */
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  maxWaitTimeMs?: number;
  /** Partitions one consumer handles concurrently (each partition stays sequential). Default min(partitions, 8). */
  partitionsConsumedConcurrently?: number;
  /** kafkajs's log lines (info and above); without it only errors go to the console. */
  onLog?: (entry: KafkaLogEntry) => void;
  /** A consumer crashed (it is restarted, by kafkajs or by the member). */
  onConsumerCrash?: (crash: MemberCrash) => void;
}

export function createKafkaBus(options: KafkaBusOptions): Bus {
  const partitions = options.partitions;
  requirePartitionCount(partitions);
  const brokers = parseBrokers(options.brokers);
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers,
    ...(options.onLog ? { logLevel: logLevel.INFO, logCreator: () => (entry: LogEntry) => forward(entry, options.onLog) } : { logLevel: logLevel.ERROR }),
  });
  const members = new Set<Consumer>();
  let closing: Promise<void> | undefined;

  /** Connects the client `make` builds on first use; a failed connection is made afresh on the next. */
  function lazily<C extends { connect(): Promise<void> }>(make: () => C) {
    let client: Promise<C> | undefined;
    const connected = (): Promise<C> =>
      (client ??= (async () => {
        const made = make();
        await made.connect();
        return made;
      })().catch((error: unknown) => {
        client = undefined;
        throw error;
      }));
    return { connected, current: () => client };
  }
  const admin = lazily(() => kafka.admin());
  const producer = lazily(() =>
    kafka.producer({ idempotent: false, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner }),
  );

  const topics = createTopicGuard(admin.connected, partitions, options.replicationFactor);
  const partitionOf = (key: string): number => partitionForKey(key, partitions);
  const prefix = options.namePrefix ?? '';
  /** A topic's name on the broker (the prefix may take it past the length limit: checked again). */
  const onBroker = (topic: string): string => checkTopic(prefix + topic);

  function assertOpen(): void {
    if (closing) throw new Error('bus is closed');
  }

  return {
    partitions,
    partitionOf,

    async publish(plainTopic, messages) {
      assertOpen();
      checkTopic(plainTopic);
      const topic = onBroker(plainTopic);
      if (messages.length === 0) return;
      for (const m of messages) checkMessage(m, ID_HEADER);
      await topics.ensure(topic);
      const client = await producer.connected();
      // One produce request per chunk, each well under the broker's default 1 MiB limit, so a
      // large batch of ordinary messages is never refused as a whole (order kept: chunks go in turn).
      for (const chunk of byteChunks(messages, MAX_REQUEST_BYTES)) {
        await client.send({ topic, acks: -1, messages: chunk.map((m) => toKafkaMessage(m, partitionOf(m.key))) });
      }
    },

    async consume(plainOptions: ConsumerOptions): Promise<Consumer> {
      assertOpen();
      checkTopic(plainOptions.topic);
      checkConsumer(plainOptions);
      const consumeOptions: ConsumerOptions = {
        ...plainOptions,
        topic: onBroker(plainOptions.topic),
        groupId: prefix + plainOptions.groupId,
        handle: (message) => plainOptions.handle({ ...message, topic: plainOptions.topic }),
      };
      await topics.ensure(consumeOptions.topic);
      const sessionTimeout = plainOptions.sessionTimeoutMs ?? options.sessionTimeoutMs ?? 30_000;
      const rebalanceTimeout = options.rebalanceTimeoutMs ?? 60_000;
      if (consumeOptions.fromBeginning === false) {
        await fixGroupStartAtEnd(kafka, await admin.connected(), consumeOptions.groupId, consumeOptions.topic, rebalanceTimeout);
      }
      const member = await startMember({
        kafka,
        config: {
          groupId: consumeOptions.groupId,
          sessionTimeout,
          rebalanceTimeout,
          heartbeatInterval: options.heartbeatIntervalMs ?? Math.min(1000, Math.floor(sessionTimeout / 3)),
          maxWaitTimeInMs: options.maxWaitTimeMs ?? 1000,
          allowAutoTopicCreation: false,
        },
        options: consumeOptions,
        concurrency: Math.max(1, options.partitionsConsumedConcurrently ?? Math.min(partitions, 8)),
        ...(options.onConsumerCrash ? { onCrash: options.onConsumerCrash } : {}),
        onClosed: () => members.delete(member),
      });
      members.add(member);
      return member;
    },

    async ping() {
      assertOpen();
      await (await admin.connected()).describeCluster();
    },

    close() {
      closing ??= (async () => {
        await Promise.allSettled([...members].map((member) => member.close()));
        const clients: Array<Promise<{ disconnect(): Promise<void> }> | undefined> = [producer.current(), admin.current()];
        await Promise.allSettled(clients.map(async (client) => (await client)?.disconnect()));
      })();
      return closing;
    },
  };
}

export function parseBrokers(brokers: string | readonly string[]): string[] {
  const list = (typeof brokers === 'string' ? brokers.split(',') : [...brokers]).map((b) => b.trim()).filter(Boolean);
  if (list.length === 0) throw new TypeError('at least one Kafka broker (host:port) is required');
  return list;
}

function forward(entry: LogEntry, onLog: KafkaBusOptions['onLog']): void {
  const { message, timestamp: _timestamp, ...extra } = entry.log;
  const level = entry.level === logLevel.ERROR ? 'error' : entry.level === logLevel.WARN ? 'warn' : entry.level === logLevel.INFO ? 'info' : 'debug';
  onLog?.({ level, namespace: entry.namespace, message, extra });
}
