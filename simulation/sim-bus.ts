/**
 * The bus of a simulation: topics of keyed messages in partitions, consumer groups whose
 * partitions move between member processes, at least once — as the Kafka adapter behaves
 * (src/adapters/kafka/member.ts), with the faults Kafka allows:
 *
 * - eager rebalances: every member's onRevoke(all it owned) then onAssign(new), each run by
 *   the member's own process, one after another, awaited by nobody — a paused process runs
 *   them when it resumes, so for a while two processes believe they own one partition;
 * - a killed or paused process keeps its partitions until its session times out;
 * - a message is committed only after its handler resolved, and only by the partition's owner
 *   of the same generation: a message handled by a member that lost the partition meanwhile
 *   is delivered again to the next owner; a message may also be delivered again (duplicate)
 *   or after the one behind it (reordered), as redelivery after a rewind does.
 */
import { partitionForKey } from '../src/adapters/inproc/murmur2.js';
import type { Bus, BusMessage, Consumer, ConsumerOptions } from '../src/ports/bus.js';
import type { FaultCounts, FaultRates } from './faults.js';
import type { SimNode } from './node.js';
import type { Random } from './random.js';

interface Member {
  node: SimNode;
  options: ConsumerOptions;
  owned: Set<number>;
  closed: boolean;
  /** The process's session timed out (killed, or paused too long): it owns nothing. */
  expired: boolean;
  /** The member's rebalance listeners, one after another in its own process. */
  listeners: Promise<void>;
  /** Per partition: resolves once its onAssign has run (messages wait for it). */
  ready: Map<number, Promise<void>>;
}

interface Group {
  id: string;
  topic: string;
  members: Member[];
  owner: Map<number, Member>;
  /** Next offset to deliver, per partition. */
  committed: number[];
  generation: number;
  pumping: Map<number, number>;
}

export interface SimBusDeps {
  partitions: number;
  random: () => Random;
  rates: FaultRates;
  faults: FaultCounts;
  faulty: () => boolean;
}

/** What a process believes of one partition of one group: as its own listeners last ran. */
interface Belief {
  owned: boolean;
  /** When its revoke listener last ran, in the process's own time (SimNode.awakeMs). */
  revokedAt?: number;
}

export class SimBus {
  private readonly logs = new Map<string, BusMessage[][]>();
  private readonly groups = new Map<string, Group>();
  private readonly beliefs = new Map<SimNode, Map<string, Belief>>();

  constructor(private readonly d: SimBusDeps) {}

  readonly partitionOf = (key: string): number => partitionForKey(key, this.d.partitions);

  /** The bus as process `node` sees it. */
  forNode(node: SimNode): Bus {
    return {
      partitions: this.d.partitions,
      partitionOf: this.partitionOf,
      publish: (topic, messages) => node.call(async () => this.publish(topic, messages)),
      consume: (options) => node.call(() => this.join(node, options)),
      ping: () => node.call(async () => undefined),
      close: async () => undefined,
    };
  }

  /**
   * Whether `node` believes it owns `partition` of `groupId` (its assign listener ran, its revoke
   * listener not since), and when it last learnt it did not: a paused process believes what it
   * believed when it froze.
   */
  belief(node: SimNode, groupId: string, partition: number): Readonly<Belief> {
    return this.beliefs.get(node)?.get(`${groupId}/${partition}`) ?? { owned: false };
  }

  private believe(node: SimNode, groupId: string, partitions: readonly number[], owned: boolean): void {
    let mine = this.beliefs.get(node);
    if (!mine) this.beliefs.set(node, (mine = new Map<string, Belief>()));
    for (const p of partitions) {
      const key = `${groupId}/${p}`;
      mine.set(key, owned ? { ...mine.get(key), owned } : { owned, revokedAt: node.awakeMs() });
    }
  }

  /** Partitions move: every group of `node`'s members (or all groups) rebalances. */
  rebalanceAll(): void {
    for (const group of this.groups.values()) this.rebalance(group, true);
  }

  /** A killed or paused process's session has timed out: its members lose their partitions. */
  expire(node: SimNode): void {
    for (const group of this.groups.values()) {
      const mine = group.members.filter((m) => m.node === node && !m.expired);
      if (mine.length === 0) continue;
      for (const m of mine) m.expired = true;
      this.rebalance(group, false);
    }
  }

  /** A paused process resumed after its session expired: its members rejoin. */
  rejoin(node: SimNode): void {
    for (const group of this.groups.values()) {
      const mine = group.members.filter((m) => m.node === node && m.expired && !m.closed);
      if (mine.length === 0) continue;
      for (const m of mine) m.expired = false;
      this.rebalance(group, false);
    }
  }

  private log(topic: string): BusMessage[][] {
    let log = this.logs.get(topic);
    if (!log) {
      log = Array.from({ length: this.d.partitions }, () => []);
      this.logs.set(topic, log);
    }
    return log;
  }

  private publish(topic: string, messages: readonly BusMessage[]): void {
    const log = this.log(topic);
    const touched = new Set<number>();
    for (const m of messages) {
      const p = this.partitionOf(m.key);
      log[p]!.push(m);
      touched.add(p);
    }
    for (const group of this.groups.values()) if (group.topic === topic) for (const p of touched) void this.pump(group, p);
  }

  private async join(node: SimNode, options: ConsumerOptions): Promise<Consumer> {
    const key = `${options.groupId}\u0000${options.topic}`;
    let group = this.groups.get(key);
    if (!group) {
      const start = options.fromBeginning === false ? this.log(options.topic).map((p) => p.length) : new Array<number>(this.d.partitions).fill(0);
      group = { id: options.groupId, topic: options.topic, members: [], owner: new Map(), committed: start, generation: 0, pumping: new Map() };
      this.groups.set(key, group);
    }
    const member: Member = { node, options, owned: new Set(), closed: false, expired: false, listeners: Promise.resolve(), ready: new Map() };
    group.members.push(member);
    this.rebalance(group, false);
    await member.listeners;
    const g = group;
    return {
      close: async () => {
        if (member.closed) return;
        member.closed = true;
        this.rebalance(g, false);
        await member.listeners;
        g.members = g.members.filter((m) => m !== member);
      },
    };
  }

  /** Eager: every live member gives up what it owned, then gets its share (round robin). */
  private rebalance(group: Group, shuffle: boolean): void {
    group.generation++;
    const live = group.members.filter((m) => !m.closed && !m.expired);
    const order = shuffle ? [...live].sort(() => this.d.random().float() - 0.5) : live;
    for (const m of group.members) {
      if (m.owned.size === 0) continue;
      const revoked = [...m.owned];
      m.owned.clear();
      m.ready.clear();
      // A member whose session expired is not told until its process resumes (gate).
      void this.enqueue(m, () => {
        this.believe(m.node, group.id, revoked, false);
        return m.options.onRevoke?.(revoked);
      });
    }
    group.owner.clear();
    for (let p = 0; p < this.d.partitions; p++) {
      const m = order[p % Math.max(1, order.length)];
      if (!m) continue;
      m.owned.add(p);
      group.owner.set(p, m);
    }
    for (const m of order) {
      if (m.owned.size === 0) continue;
      const assigned = [...m.owned];
      const done = this.enqueue(m, () => {
        this.believe(m.node, group.id, assigned, true);
        return m.options.onAssign?.(assigned);
      });
      for (const p of assigned) m.ready.set(p, done);
    }
    for (let p = 0; p < this.d.partitions; p++) void this.pump(group, p);
  }

  private enqueue(m: Member, listener: () => void | Promise<void>): Promise<void> {
    m.listeners = m.listeners
      .then(() => m.node.gate())
      .then(listener)
      .catch(() => undefined);
    return m.listeners;
  }

  /** Delivers partition `p`'s messages to its owner of this generation, one at a time. */
  private async pump(group: Group, p: number): Promise<void> {
    const generation = group.generation;
    if (group.pumping.get(p) === generation) return;
    group.pumping.set(p, generation);
    try {
      const log = this.log(group.topic)[p]!;
      const owner = group.owner.get(p);
      if (!owner) return;
      await owner.ready.get(p);
      while (group.generation === generation && group.committed[p]! < log.length) {
        const at = group.committed[p]!;
        const order = at + 1 < log.length && this.fault('busReorder') ? [at + 1, at] : [at];
        for (const i of order) await this.deliver(owner, group, p, i, generation);
        if (group.generation !== generation) return; // not committed: the next owner gets them again
        if (this.fault('busDuplicate')) continue; // handled, not committed: delivered again
        group.committed[p] = at + order.length;
      }
    } finally {
      if (group.pumping.get(p) === generation) group.pumping.delete(p);
    }
  }

  private async deliver(owner: Member, group: Group, p: number, offset: number, generation: number): Promise<void> {
    const message = this.log(group.topic)[p]![offset]!;
    for (;;) {
      if (group.generation !== generation) return;
      try {
        await owner.node.call(() => owner.options.handle({ ...message, topic: group.topic, partition: p, offset: BigInt(offset) }));
        return;
      } catch {
        // As the Kafka member: the same message again after a while.
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  private fault(kind: 'busDuplicate' | 'busReorder'): boolean {
    if (!this.d.faulty() || !this.d.random().chance(this.d.rates[kind])) return false;
    this.d.faults.add(kind);
    return true;
  }
}
