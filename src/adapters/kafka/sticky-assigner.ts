/**
 * A sticky partition assigner for kafkajs, for members with `incrementalRebalance`. kafkajs ships
 * round-robin only, which deals every partition out again by member id at each rebalance: a
 * fourth worker joining three moves about 10 of 16 partitions, not the 4 it needs. Here each
 * member states the partitions it owns now (its JoinGroup metadata's userData, as Kafka's own
 * StickyAssignor does) and the group's leader keeps each member's partitions up to its fair
 * share, moving only the rest. Listed before round-robin, so a group with a member that does not
 * know it (an older gateway) still agrees on round-robin.
 */
import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

export const STICKY_ASSIGNER = 'GatewayStickyAssigner';

/**
 * Which partitions of one topic each member gets: members whose claims are larger get the
 * larger shares; each keeps what it claims up to its share (a partition two members claim goes
 * to the first in that order); the rest goes to members below their share, lowest id first.
 */
export function planSticky(
  memberIds: readonly string[],
  partitions: readonly number[],
  claimed: ReadonlyMap<string, readonly number[]>,
): Map<string, number[]> {
  const valid = new Set(partitions);
  // Each member's claims on this topic's partitions, deduplicated and in order: read once.
  const claims = new Map(memberIds.map((id) => [id, [...new Set(claimed.get(id) ?? [])].filter((p) => valid.has(p)).sort((a, b) => a - b)]));
  const claimsOf = (id: string) => claims.get(id)!;
  const order = [...memberIds].sort((a, b) => claimsOf(b).length - claimsOf(a).length || (a < b ? -1 : a > b ? 1 : 0));
  const base = Math.floor(partitions.length / order.length);
  const extra = partitions.length % order.length;
  const share = new Map(order.map((id, i) => [id, base + (i < extra ? 1 : 0)]));
  const plan = new Map<string, number[]>(order.map((id) => [id, []]));
  const taken = new Set<number>();
  for (const id of order) {
    for (const p of claimsOf(id)) {
      if (plan.get(id)!.length >= share.get(id)!) break;
      if (taken.has(p)) continue;
      plan.get(id)!.push(p);
      taken.add(p);
    }
  }
  const free = [...valid].filter((p) => !taken.has(p)).sort((a, b) => a - b);
  for (const id of [...memberIds].sort()) {
    const mine = plan.get(id)!;
    while (mine.length < share.get(id)! && free.length > 0) mine.push(free.shift()!);
    mine.sort((a, b) => a - b);
  }
  return plan;
}

/** `owned()`: the partitions, by topic, this member owns when it (re)joins. */
export function stickyAssigner(owned: () => Record<string, number[]>): PartitionAssigner {
  return ({ cluster }) => ({
    name: STICKY_ASSIGNER,
    version: 0,
    async assign({ members, topics }) {
      const memberIds = members.map((m) => m.memberId);
      const claims = members.map((m) => {
        const userData = AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData;
        try {
          return { id: m.memberId, owned: userData && userData.length > 0 ? (JSON.parse(userData.toString('utf8')) as Record<string, number[]>) : {} };
        } catch {
          return { id: m.memberId, owned: {} };
        }
      });
      const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
      for (const topic of topics) {
        const partitions = cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId);
        const claimed = new Map(claims.map((c) => [c.id, Array.isArray(c.owned[topic]) ? c.owned[topic] : []]));
        for (const [id, ps] of planSticky(memberIds, partitions, claimed)) assignment.get(id)![topic] = ps;
      }
      return memberIds.map((memberId) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: assignment.get(memberId)!, userData: Buffer.alloc(0) }),
      }));
    },
    protocol({ topics }) {
      return {
        name: STICKY_ASSIGNER,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.from(JSON.stringify(owned())) }),
      };
    },
  });
}
