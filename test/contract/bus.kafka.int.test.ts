/**
 * The shared Bus contract against Kafka (a KRaft single-broker container, or KAFKA_BROKERS).
 * Topics and groups are unique per test. Consumer timings are short so rebalances finish in
 * about a second; deliveries and rebalances get 30 s.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, vi } from 'vitest';
import { createKafkaBus, type KafkaBusOptions } from '../../src/adapters/kafka/bus.js';
import type { Bus } from '../../src/ports/bus.js';
import { BACKEND_STARTUP_TIMEOUT_MS, contractTarget, type RunningBackend } from '../support/containers.js';
import { busContract } from './bus.contract.js';

const target = contractTarget('kafka', 'Kafka bus');
vi.setConfig({ testTimeout: 180_000 });

describe.skipIf(!target.available)(target.title, () => {
  let backend: RunningBackend | undefined;
  beforeAll(async () => {
    backend = await target.start();
  }, BACKEND_STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    await backend?.stop();
  });

  busContract(
    'Kafka',
    async () => {
      if (!backend) throw new Error('Kafka did not start');
      const options: KafkaBusOptions = {
        brokers: backend.url,
        clientId: `contract-${randomUUID().slice(0, 8)}`,
        partitions: 4,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 20_000,
        heartbeatIntervalMs: 300,
        maxWaitTimeMs: 200,
      };
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
});
