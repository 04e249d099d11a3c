/**
 * Work ownership across instances: a task's dispatch, polling and callbacks run only on the
 * instance that owns the bus partition of its task id. Partitions are handed out by a consumer
 * group on a topic that carries no messages; the bus's assignment and revocation move the work.
 * With one instance (the embedded default) that instance owns every partition.
 */
import type { Bus, Consumer } from '../ports/bus.js';

export const OWNERSHIP_TOPIC = 'gateway.engine-ownership.v1';

export interface Ownership {
  owns(taskId: string): boolean;
  ownsPartition(partition: number): boolean;
  partitionOf(taskId: string): number;
  start(handlers: { onAssign(partitions: readonly number[]): Promise<void>; onRevoke(partitions: readonly number[]): void }): Promise<void>;
  stop(): Promise<void>;
}

export function createOwnership(bus: Bus, groupId = 'gateway-engine'): Ownership {
  const owned = new Set<number>();
  let consumer: Consumer | undefined;
  return {
    owns: (taskId) => owned.has(bus.partitionOf(taskId)),
    ownsPartition: (partition) => owned.has(partition),
    partitionOf: (taskId) => bus.partitionOf(taskId),
    async start(handlers) {
      consumer = await bus.consume({
        topic: OWNERSHIP_TOPIC,
        groupId,
        fromBeginning: false,
        handle: async () => undefined,
        onAssign: async (partitions) => {
          for (const p of partitions) owned.add(p);
          await handlers.onAssign(partitions);
        },
        onRevoke: (partitions) => {
          for (const p of partitions) owned.delete(p);
          handlers.onRevoke(partitions);
        },
      });
    },
    async stop() {
      await consumer?.close();
      consumer = undefined;
      owned.clear();
    },
  };
}
