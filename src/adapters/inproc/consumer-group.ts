/**
 * One consumer group of one topic in this process: its live members and which partitions each
 * owns. Membership changes are applied one at a time; each rebalances with the range assignor
 * (members in join order, contiguous partition ranges, the first ones one larger) in two phases:
 * every partition taken away is stopped (its in-flight message finishes) and revoked first, only
 * then are new partitions assigned and started — so no partition ever has two owners.
 */
import { notifyListener, type ConsumerOptions } from '../../ports/bus.js';
import type { PartitionWorker } from './partition-worker.js';

export interface GroupMember {
  readonly id: number;
  readonly options: ConsumerOptions;
  readonly owned: Map<number, PartitionWorker>;
}

export interface ConsumerGroup {
  /** Resolves once the rebalance that admits the member is done (its onAssign has run). */
  join(options: ConsumerOptions): Promise<GroupMember>;
  /** Resolves once the member's partitions are revoked and handed to the remaining members. */
  leave(member: GroupMember): Promise<void>;
  leaveAll(): Promise<void>;
}

export interface ConsumerGroupOptions {
  partitions: number;
  startWorker(partition: number, options: ConsumerOptions): PartitionWorker;
}

/** Range assignment: member index i gets a contiguous run; the first `partitions % n` get one more. */
function rangeAssign(memberIds: readonly number[], partitions: number): Map<number, number[]> {
  const result = new Map<number, number[]>();
  const n = memberIds.length;
  let next = 0;
  memberIds.forEach((id, i) => {
    const count = Math.floor(partitions / n) + (i < partitions % n ? 1 : 0);
    result.set(
      id,
      Array.from({ length: count }, (_, k) => next + k),
    );
    next += count;
  });
  return result;
}

export function createConsumerGroup(o: ConsumerGroupOptions): ConsumerGroup {
  const members: GroupMember[] = [];
  let nextMemberId = 1;
  let chain: Promise<void> = Promise.resolve();

  function serialize(step: () => Promise<void>): Promise<void> {
    const result = chain.then(step);
    chain = result.catch(() => undefined);
    return result;
  }

  async function revoke(member: GroupMember, keep: ReadonlySet<number>): Promise<void> {
    const lost = [...member.owned.keys()].filter((p) => !keep.has(p)).sort((a, b) => a - b);
    if (lost.length === 0) return;
    await Promise.all(lost.map((p) => member.owned.get(p)?.stop() ?? Promise.resolve()));
    for (const p of lost) member.owned.delete(p);
    await notifyListener(member.options.onRevoke && (() => member.options.onRevoke?.(lost)));
  }

  async function assign(member: GroupMember, target: readonly number[]): Promise<void> {
    const gained = target.filter((p) => !member.owned.has(p));
    if (gained.length === 0) return;
    await notifyListener(member.options.onAssign && (() => member.options.onAssign?.(gained)));
    for (const p of gained) member.owned.set(p, o.startWorker(p, member.options));
  }

  async function rebalance(leaving: readonly GroupMember[]): Promise<void> {
    const target = rangeAssign(
      members.map((m) => m.id),
      o.partitions,
    );
    await Promise.all([...members, ...leaving].map((m) => revoke(m, new Set(target.get(m.id)))));
    await Promise.all(members.map((m) => assign(m, target.get(m.id) ?? [])));
  }

  return {
    async join(options) {
      const member: GroupMember = { id: nextMemberId++, options, owned: new Map() };
      await serialize(async () => {
        members.push(member);
        await rebalance([]);
      });
      return member;
    },
    leave(member) {
      return serialize(async () => {
        const index = members.indexOf(member);
        if (index < 0) return;
        members.splice(index, 1);
        await rebalance([member]);
      });
    },
    leaveAll() {
      return serialize(async () => {
        await rebalance(members.splice(0));
      });
    },
  };
}
