/**
 * Work ownership across instances: a task's dispatch, polling and callbacks run only on the
 * instance that owns the bus partition of its task id. Partitions are handed out by a consumer
 * group on a topic that carries no messages; the bus's assignment and revocation move the work.
 * With one instance (the embedded default) that instance owns every partition.
 */
import type { Bus, Consumer } from '../../ports/bus.js';

export const OWNERSHIP_TOPIC = 'gateway.engine-ownership.v1';

export interface Ownership {
  owns(taskId: string): boolean;
  ownsPartition(partition: number): boolean;
  partitionOf(taskId: string): number;
  /** The partitions owned now, in order (for /readyz). */
  partitions(): number[];
  start(handlers: { onAssign(partitions: readonly number[]): Promise<void>; onRevoke(partitions: readonly number[]): void }): Promise<void>;
  stop(): Promise<void>;
}

/** The consumer group engine instances split the task partitions by. */
export const ENGINE_GROUP = 'gateway-engine';

export function createOwnership(bus: Bus, groupId = ENGINE_GROUP): Ownership {
  const owned = new Set<number>();
  /** Adoptions of assigned partitions still under way (the bus does not wait for them). */
  const adopting = new Set<Promise<void>>();
  let consumer: Consumer | undefined;
  function adoptBeside(adoption: () => Promise<void>): void {
    const run = adoption().catch(() => undefined);
    adopting.add(run);
    void run.finally(() => adopting.delete(run));
  }
  return {
    owns: (taskId) => owned.has(bus.partitionOf(taskId)),
    ownsPartition: (partition) => owned.has(partition),
    partitionOf: (taskId) => bus.partitionOf(taskId),
    partitions: () => [...owned].sort((a, b) => a - b),
    async start(handlers) {
      consumer = await bus.consume({
        topic: OWNERSHIP_TOPIC,
        groupId,
        fromBeginning: false,
        // Only partitions that move are revoked and adopted when the group rebalances: the tasks of
        // the others are polled throughout, and nothing is read again for them. A partition that
        // moves may have two owners for a moment; claims fence its work (dispatcher.ts).
        incrementalRebalance: true,
        handle: async () => undefined,
        // The adoption runs beside, not in, the listener: the Kafka member runs its listeners one
        // after another, so a revoke would otherwise wait behind an adoption (up to the views'
        // 120 s catch-up) while kafkajs rejoins without waiting and the group hands the
        // partitions to another instance: two owners. A revoke now applies at once, and the
        // adoption skips whatever is no longer owned.
        onAssign: (partitions) => {
          for (const p of partitions) owned.add(p);
          adoptBeside(() => handlers.onAssign(partitions));
        },
        onRevoke: (partitions) => {
          for (const p of partitions) owned.delete(p);
          handlers.onRevoke(partitions);
        },
      });
      // The first assignment's adoption is part of starting: a restarted instance has taken its
      // unfinished tasks back when start resolves.
      await Promise.allSettled([...adopting]);
    },
    async stop() {
      await consumer?.close();
      consumer = undefined;
      owned.clear();
      // Owning nothing, an adoption still under way ends; it must not outlive the stores.
      await Promise.allSettled([...adopting]);
    },
  };
}
