/**
 * The shared Bus contract against a real Kafka broker: KAFKA_BROKERS (CI starts one with
 * scripts/kafka-local.sh), or a KRaft single-broker container. Topics and groups are unique per
 * test. Consumer timings are short so rebalances finish in about a second; deliveries and
 * rebalances get 30 s. REQUIRE_KAFKA=1 turns the skip (no broker) into a failure.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { TopicPartitionMismatchError, createKafkaBus, parseBrokers, type KafkaBusOptions } from '../../src/adapters/kafka/bus.js';
import type { Bus } from '../../src/ports/bus.js';
import { contractTarget, useBackend } from '../support/containers.js';
import { busContract } from './bus.contract.js';
import { messages, received, unique, waitFor } from './bus.contract-support.js';

const target = contractTarget('kafka', 'Kafka bus');
const required = process.env.REQUIRE_KAFKA === '1';
vi.setConfig({ testTimeout: 60_000 });

const busOptions = (brokers: string, partitions = 4): KafkaBusOptions => ({
  brokers,
  clientId: `contract-${randomUUID().slice(0, 8)}`,
  partitions,
  sessionTimeoutMs: 10_000,
  rebalanceTimeoutMs: 20_000,
  heartbeatIntervalMs: 300,
  maxWaitTimeMs: 200,
});

// Without a broker this fails under REQUIRE_KAFKA=1 (target.start() rejects naming the reason).
describe.skipIf(!target.available && !required)(target.title, () => {
  const brokers = useBackend(target, 'Kafka');

  busContract(
    'Kafka',
    async () => {
      const options = busOptions(brokers());
      let bus: Bus = createKafkaBus(options);
      return {
        bus,
        async reopen() {
          await bus.close();
          bus = createKafkaBus(options);
          return bus;
        },
        async cleanup() {
          await bus.close();
        },
      };
    },
    { timeoutMs: 30_000 },
  );

  describe('Kafka bus on a real broker', () => {
    const open: Bus[] = [];
    const bus = (partitions?: number, namePrefix?: string): Bus => {
      const created = createKafkaBus({ ...busOptions(brokers(), partitions), ...(namePrefix === undefined ? {} : { namePrefix }) });
      open.push(created);
      return created;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((b) => b.close()));
    });

    it('refuses a topic that exists with another partition count, for publishing and consuming', async () => {
      const topic = unique('mismatch');
      await bus(2).publish(
        topic,
        messages(1, () => 'k'),
      );
      const four = bus(4);
      await expect(
        four.publish(
          topic,
          messages(1, () => 'k'),
        ),
      ).rejects.toBeInstanceOf(TopicPartitionMismatchError);
      await expect(four.consume({ topic, groupId: unique('g'), handle: async () => undefined })).rejects.toThrow(
        /has 2 partitions but the bus is configured with 4/,
      );
    });

    it('publishes a batch far larger than one produce request allows (40 × 100 KiB), every message delivered', async () => {
      const topic = unique('large');
      const publisher = bus();
      const big = messages(40, (i) => `key-${i % 5}`).map((m) => ({ ...m, value: `${m.value}:${'x'.repeat(100 * 1024)}` }));
      await publisher.publish(topic, big);
      const got = received();
      await publisher.consume({ topic, groupId: unique('g'), fromBeginning: true, handle: got.handle });
      await waitFor('every large message', () => got.hasAll(big), 30_000);
    });

    it('keeps a fromBeginning false group’s start when its first member leaves before handling anything', async () => {
      const topic = unique('start');
      const groupId = unique('g');
      const publisher = bus();
      const old = messages(8, (i) => `key-${i}`);
      await publisher.publish(topic, old);
      const first = received();
      const c1 = await publisher.consume({ topic, groupId, fromBeginning: false, handle: first.handle });
      await c1.close();

      // Published while the group has no member and no offset of its own: a start at "latest"
      // on the next member would skip these.
      const during = messages(8, (i) => `key-${i}`);
      await publisher.publish(topic, during);
      const second = received();
      await bus().consume({ topic, groupId, fromBeginning: false, handle: second.handle });
      await waitFor('the messages published between the two members', () => second.hasAll(during), 30_000);
      expect(old.filter((m) => second.ids().has(m.id) || first.ids().has(m.id))).toEqual([]);
    });

    it('keeps two deployments on one broker apart by KAFKA_PREFIX: same topic and group names, separate topics and groups', async () => {
      const topic = unique('shared');
      const groupId = unique('g');
      const [a, b] = [unique('a').slice(0, 10) + '.', unique('b').slice(0, 10) + '.'];
      const busA = bus(2, a);
      const busB = bus(4, b); // another partition count: would be refused on a shared topic
      const sentA = messages(6, (i) => `key-${i}`);
      const sentB = messages(6, (i) => `key-${i}`);
      await busA.publish(topic, sentA);
      await busB.publish(topic, sentB);
      const [gotA, gotB] = [received(), received()];
      await busA.consume({ topic, groupId, fromBeginning: true, handle: gotA.handle });
      await busB.consume({ topic, groupId, fromBeginning: true, handle: gotB.handle });
      await waitFor('each deployment its own messages', () => gotA.hasAll(sentA) && gotB.hasAll(sentB), 30_000);
      // Neither sees the other's messages, and handlers see the plain topic name.
      expect(gotA.all.filter((m) => !sentA.some((s) => s.id === m.id))).toEqual([]);
      expect(gotB.all.filter((m) => !sentB.some((s) => s.id === m.id))).toEqual([]);
      expect(new Set([...gotA.all, ...gotB.all].map((m) => m.topic))).toEqual(new Set([topic]));
      // On the broker: the prefixed topics and groups, none under the plain names.
      const admin = new Kafka({ clientId: 'prefix-check', brokers: parseBrokers(brokers()), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        const topics = await admin.listTopics();
        expect(topics).toEqual(expect.arrayContaining([`${a}${topic}`, `${b}${topic}`]));
        expect(topics).not.toContain(topic);
        const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
        expect(groups).toEqual(expect.arrayContaining([`${a}${groupId}`, `${b}${groupId}`]));
        expect(groups).not.toContain(groupId);
      } finally {
        await admin.disconnect();
      }
    });
  });
});
