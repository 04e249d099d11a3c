/**
 * The shared Bus contract against a real Kafka broker: KAFKA_BROKERS (CI starts one with
 * scripts/kafka-local.sh), or a KRaft single-broker container. Topics and groups are unique per
 * test. Consumer timings are short so rebalances finish in about a second; deliveries and
 * rebalances get 30 s. REQUIRE_KAFKA=1 turns the skip (no broker) into a failure.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TopicPartitionMismatchError, createKafkaBus, type KafkaBusOptions } from '../../src/adapters/kafka/bus.js';
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
    const bus = (partitions?: number): Bus => {
      const created = createKafkaBus(busOptions(brokers(), partitions));
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
  });
});
