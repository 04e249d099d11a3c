/**
 * Starting a consumer group with `fromBeginning: false` on a broker that is still setting up
 * its group coordinator (the first group operation on a fresh broker — a first `docker compose
 * up`): kafkajs's admin answers "coordinator loading / not available" without retrying, and the
 * process used to fail its start. Retriable answers are retried until the timeout; others fail
 * at once. A stand-in admin; bus.kafka.int.test.ts and split-roles.e2e.test.ts run the real one.
 */
import type { Admin, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { fixGroupStartAtEnd } from '../../src/adapters/kafka/group-start.js';

/** kafkajs's protocol errors carry `retriable` (GROUP_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE: true). */
const kafkaError = (message: string, retriable: boolean) => Object.assign(new Error(message), { retriable });

/** An admin whose fetchOffsets fails with `failures` in turn, then finds every partition committed (nothing to fix). */
function adminFailing(failures: Error[]): { admin: Admin; calls: () => number } {
  let calls = 0;
  const admin = {
    fetchOffsets: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return [{ topic: 't', partitions: [{ partition: 0, offset: '5' }] }];
    },
  };
  return { admin: admin as unknown as Admin, calls: () => calls };
}

const kafka = {} as unknown as Kafka;

describe('fixing a new group’s start on a broker that is still starting', () => {
  it('retries "coordinator loading" answers until the broker answers', async () => {
    const loading = kafkaError('The coordinator is loading and hence can’t process requests for this group', true);
    const { admin, calls } = adminFailing([loading, loading]);
    await fixGroupStartAtEnd(kafka, admin, 'g', 't', 5000);
    expect(calls()).toBe(3);
  });

  it('fails at once on an answer that is not retriable', async () => {
    const { admin, calls } = adminFailing([kafkaError('not authorized', false)]);
    await expect(fixGroupStartAtEnd(kafka, admin, 'g', 't', 5000)).rejects.toThrow('not authorized');
    expect(calls()).toBe(1);
  });

  it('gives up with the broker’s answer once the timeout has passed', async () => {
    const loading = kafkaError('The coordinator is loading', true);
    const { admin } = adminFailing(Array.from({ length: 100 }, () => loading));
    await expect(fixGroupStartAtEnd(kafka, admin, 'g', 't', 300)).rejects.toThrow('The coordinator is loading');
  });
});
