/**
 * The Kafka adapter's own logic, without a broker: group-member ownership and offset handling
 * on a stand-in kafkajs consumer that emits the instrumentation events kafkajs emits
 * (GROUP_JOIN with the member assignment, REBALANCING before rejoining, CRASH), message
 * encoding, and the topic partition-count check. What Kafka and kafkajs do is proven only by
 * bus.kafka.int.test.ts, wherever Docker or KAFKA_BROKERS exists.
 */
import type { Admin, ConsumerConfig, ConsumerRunConfig, EachMessagePayload, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createKafkaBus, parseBrokers } from '../../src/adapters/kafka/bus.js';
import { startMember } from '../../src/adapters/kafka/member.js';
import { ID_HEADER, fromKafkaMessage, toKafkaMessage } from '../../src/adapters/kafka/messages.js';
import { TopicPartitionMismatchError, createTopicGuard } from '../../src/adapters/kafka/topics.js';
import type { ConsumerOptions, DeliveredMessage } from '../../src/ports/bus.js';

const TOPIC = 'gateway.task-events.v1';
const EVENTS = { GROUP_JOIN: 'consumer.group_join', REBALANCING: 'consumer.rebalancing', CRASH: 'consumer.crash' } as const;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class ConsumerStandIn {
  readonly events = EVENTS;
  readonly commits: Array<{ partition: number; offset: string }> = [];
  paused = false;
  disconnected = false;
  private readonly listeners = new Map<string, Array<(event: { payload: unknown }) => void>>();
  private eachMessage: ConsumerRunConfig['eachMessage'];

  constructor(private readonly initial: number[]) {}

  on(name: string, listener: (event: { payload: unknown }) => void): () => void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener]);
    return () => undefined;
  }
  emit(name: string, payload: unknown): void {
    for (const listener of this.listeners.get(name) ?? []) listener({ payload });
  }
  join(partitions: number[]): void {
    this.emit(EVENTS.GROUP_JOIN, { memberAssignment: { [TOPIC]: partitions } });
  }
  async connect(): Promise<void> {}
  async subscribe(): Promise<void> {}
  async run(config: ConsumerRunConfig): Promise<void> {
    this.eachMessage = config.eachMessage;
    this.join(this.initial);
  }
  async commitOffsets(offsets: Array<{ partition: number; offset: string }>): Promise<void> {
    this.commits.push(...offsets.map(({ partition, offset }) => ({ partition, offset })));
  }
  pause(): void {
    this.paused = true;
  }
  async disconnect(): Promise<void> {
    this.disconnected = true;
  }
  deliver(partition: number, offset: number, heartbeat: () => Promise<void> = async () => undefined): Promise<void> {
    const payload: EachMessagePayload = {
      topic: TOPIC,
      partition,
      message: {
        key: Buffer.from('task-1'),
        value: Buffer.from('{}'),
        timestamp: '0',
        attributes: 0,
        offset: String(offset),
        headers: { [ID_HEADER]: `m-${offset}` },
      },
      heartbeat,
      pause: () => () => undefined,
    };
    if (!this.eachMessage) throw new Error('not running');
    return this.eachMessage(payload);
  }
}

function kafkaStandIn(...consumers: ConsumerStandIn[]): { kafka: Kafka; created: ConsumerStandIn[] } {
  const created: ConsumerStandIn[] = [];
  const factory = {
    consumer: () => {
      const next = consumers[created.length] ?? new ConsumerStandIn([]);
      created.push(next);
      return next;
    },
  };
  // The stand-in implements only what the member calls.
  return { kafka: factory as unknown as Kafka, created };
}

function recorder(handle: ConsumerOptions['handle'] = async () => undefined) {
  const log: string[] = [];
  const options: ConsumerOptions = {
    topic: TOPIC,
    groupId: 'g',
    handle,
    onAssign: (ps) => void log.push(`assign ${ps.join(',')}`),
    onRevoke: (ps) => void log.push(`revoke ${ps.join(',')}`),
  };
  return { log, options };
}

async function member(consumer: ConsumerStandIn, options: ConsumerOptions, extra: ConsumerStandIn[] = [], config: Partial<ConsumerConfig> = {}) {
  const { kafka, created } = kafkaStandIn(consumer, ...extra);
  const started = await startMember({ kafka, config: { groupId: options.groupId, ...config }, options, concurrency: 2, onClosed: () => undefined });
  return { started, created };
}

describe('Kafka group member (kafkajs stand-in)', () => {
  it('assigns its first partitions before consume resolves', async () => {
    const { log, options } = recorder();
    await member(new ConsumerStandIn([0, 1]), options);
    expect(log).toEqual(['assign 0,1']);
  });

  it('revokes everything when a rebalance starts and assigns the new set on GROUP_JOIN', async () => {
    const consumer = new ConsumerStandIn([0, 1]);
    const { log, options } = recorder();
    await member(consumer, options);
    consumer.emit(EVENTS.REBALANCING, {});
    consumer.join([1, 2]);
    await sleep(0);
    expect(log).toEqual(['assign 0,1', 'revoke 0,1', 'assign 1,2']);
  });

  it('with incrementalRebalance, keeps its partitions through REBALANCING and revokes only what GROUP_JOIN moved', async () => {
    const consumer = new ConsumerStandIn([0, 1]);
    const { log, options } = recorder();
    await member(consumer, { ...options, incrementalRebalance: true });
    consumer.emit(EVENTS.REBALANCING, {});
    await sleep(0);
    expect(log).toEqual(['assign 0,1']);
    consumer.join([1, 2]);
    await sleep(0);
    expect(log).toEqual(['assign 0,1', 'revoke 0', 'assign 2']);
  });

  it('with incrementalRebalance, revokes everything when no assignment follows a rebalance within the rebalance timeout', async () => {
    const consumer = new ConsumerStandIn([0, 1]);
    const { log, options } = recorder();
    await member(consumer, { ...options, incrementalRebalance: true }, [], { rebalanceTimeout: 50 });
    consumer.emit(EVENTS.REBALANCING, {});
    await sleep(20);
    expect(log).toEqual(['assign 0,1']);
    await sleep(60);
    expect(log).toEqual(['assign 0,1', 'revoke 0,1']);
    consumer.join([1]);
    await sleep(0);
    expect(log).toEqual(['assign 0,1', 'revoke 0,1', 'assign 1']);
  });

  it('computes revocation as previous minus new when a GROUP_JOIN comes without REBALANCING', async () => {
    const consumer = new ConsumerStandIn([0, 1]);
    const { log, options } = recorder();
    await member(consumer, options);
    consumer.join([1, 2]);
    await sleep(0);
    expect(log).toEqual(['assign 0,1', 'revoke 0', 'assign 2']);
  });

  it('retries a failing handler and commits the next offset only after it succeeded', async () => {
    const consumer = new ConsumerStandIn([0]);
    let attempts = 0;
    const seen: DeliveredMessage[] = [];
    const { options } = recorder(async (message) => {
      attempts += 1;
      if (attempts < 3) throw new Error('not yet');
      seen.push(message);
    });
    await member(consumer, options);
    await consumer.deliver(0, 41);
    expect(attempts).toBe(3);
    expect(consumer.commits).toEqual([{ partition: 0, offset: '42' }]);
    expect(seen[0]).toMatchObject({ id: 'm-41', key: 'task-1', topic: TOPIC, partition: 0, offset: 41n });
  });

  it('gives up a failing message uncommitted when the heartbeat reports a rebalance', async () => {
    const consumer = new ConsumerStandIn([0]);
    const { options } = recorder(async () => {
      throw new Error('always');
    });
    await member(consumer, options);
    const rebalancing = Object.assign(new Error('The group is rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
    await expect(consumer.deliver(0, 7, async () => Promise.reject(rebalancing))).rejects.toBe(rebalancing);
    expect(consumer.commits).toEqual([]);
  });

  it('on close pauses, lets the in-flight message finish, revokes, then leaves; later messages are not handled', async () => {
    const consumer = new ConsumerStandIn([0, 3]);
    let release: () => void = () => undefined;
    const handled: bigint[] = [];
    const { log, options } = recorder(async (message) => {
      if (message.offset === 1n) await new Promise<void>((resolve) => (release = resolve));
      handled.push(message.offset);
    });
    const { started } = await member(consumer, options);
    const inflight = consumer.deliver(0, 1);
    await sleep(0);
    const closing = started.close();
    await sleep(10);
    expect(consumer.paused).toBe(true);
    expect(consumer.disconnected).toBe(false);
    release();
    await inflight;
    await closing;
    await consumer.deliver(3, 2);
    expect(handled).toEqual([1n]);
    expect(log).toEqual(['assign 0,3', 'revoke 0,3']);
    expect(consumer.disconnected).toBe(true);
  });

  it('after a crash kafkajs does not restart, revokes and starts a new consumer', async () => {
    const first = new ConsumerStandIn([0, 1]);
    const second = new ConsumerStandIn([0, 1]);
    const { log, options } = recorder();
    const { created, started } = await member(first, options, [second]);
    first.emit(EVENTS.CRASH, { error: new Error('fatal'), groupId: 'g', restart: false });
    await sleep(700);
    expect(created).toHaveLength(2);
    expect(first.disconnected).toBe(true);
    expect(log).toEqual(['assign 0,1', 'revoke 0,1', 'assign 0,1']);
    await started.close();
  });
});

describe('Kafka messages and topics', () => {
  it('carries the id in a reserved header and gives back id, key, value and headers', async () => {
    const record = toKafkaMessage({ id: 'm1', key: 'task-9', value: 'v', headers: { a: 'b' } }, 3);
    expect(record).toEqual({ key: 'task-9', value: 'v', partition: 3, headers: { a: 'b', [ID_HEADER]: 'm1' } });
    const delivered = fromKafkaMessage('t', 3, {
      key: Buffer.from('task-9'),
      value: Buffer.from('v'),
      timestamp: '0',
      attributes: 0,
      offset: '12',
      headers: { a: Buffer.from('b'), [ID_HEADER]: Buffer.from('m1') },
    });
    expect(delivered).toEqual({ id: 'm1', key: 'task-9', value: 'v', headers: { a: 'b' }, topic: 't', partition: 3, offset: 12n });
    // Refused by publish before anything is sent (no broker is reached).
    const bus = createKafkaBus({ brokers: 'localhost:9092', clientId: 'unit', partitions: 1 });
    await expect(bus.publish('t', [{ id: 'x', key: 'k', value: 'v', headers: { [ID_HEADER]: 'y' } }])).rejects.toThrow(/reserved/);
    await bus.close();
  });

  it('fails loudly when a topic exists with another partition count', async () => {
    const admin = {
      listTopics: async () => [TOPIC],
      createTopics: async () => false,
      fetchTopicMetadata: async () => ({ topics: [{ name: TOPIC, partitions: [{}, {}, {}] }] }),
    };
    const guard = createTopicGuard(async () => admin as unknown as Admin, 4, undefined);
    await expect(guard.ensure(TOPIC)).rejects.toBeInstanceOf(TopicPartitionMismatchError);
  });

  it('parses the KAFKA_BROKERS list', () => {
    expect(parseBrokers(' kafka-1:9092, kafka-2:9092 ,')).toEqual(['kafka-1:9092', 'kafka-2:9092']);
    expect(() => parseBrokers('')).toThrow(/broker/);
  });
});
