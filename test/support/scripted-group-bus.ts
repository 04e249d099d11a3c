/**
 * A bus whose consumer-group membership the test scripts: `assign` and `revoke` tell one member
 * it gained or lost partitions. Its rebalance listeners run the way the Kafka member runs them
 * (src/adapters/kafka/member.ts): one after another per member, in the order reported, and
 * nobody else waits for them — so the test can make two members own a partition at once, as a
 * kafkajs rebalance does while a revoked member is still busy. Messages are not carried.
 */
import type { Bus, Consumer, ConsumerOptions } from '../../src/ports/bus.js';

export interface ScriptedMember {
  /** Resolves once this member's listeners reported so far have run (as the Kafka member's queue). */
  assign(partitions: readonly number[]): Promise<void>;
  revoke(partitions: readonly number[]): Promise<void>;
}

export interface ScriptedGroupBus {
  bus: Bus;
  /** Members in the order they joined (each `consume` call joins one). */
  members: ScriptedMember[];
}

export function scriptedGroupBus(shape: Pick<Bus, 'partitions' | 'partitionOf'>): ScriptedGroupBus {
  const members: ScriptedMember[] = [];
  const bus: Bus = {
    partitions: shape.partitions,
    partitionOf: (key) => shape.partitionOf(key),
    publish: async () => undefined,
    ping: async () => undefined,
    close: async () => undefined,
    async consume(options: ConsumerOptions): Promise<Consumer> {
      let listeners: Promise<void> = Promise.resolve();
      const owned = new Set<number>();
      // As member.ts: each listener waits for the previous one; a failing one stops nothing.
      const enqueue = (listener: () => void | Promise<void>) => (listeners = listeners.then(listener).catch(() => undefined));
      const member: ScriptedMember = {
        assign(partitions) {
          for (const p of partitions) owned.add(p);
          return enqueue(() => options.onAssign?.(partitions));
        },
        revoke(partitions) {
          for (const p of partitions) owned.delete(p);
          return enqueue(() => options.onRevoke?.(partitions));
        },
      };
      members.push(member);
      return {
        close: () => member.revoke([...owned]),
      };
    },
  };
  return { bus, members };
}
