/**
 * The Bus contract: one suite every adapter runs (in-process now, Kafka later). Each test uses
 * its own topic and group names, so a shared broker is fine. Delivery is at-least-once, so
 * assertions look at first deliveries or sets of ids, never at exact delivery counts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../src/adapters/inproc/murmur2.js';
import type { Bus, BusMessage, Consumer, ConsumerOptions, DeliveredMessage } from '../../src/ports/bus.js';
import { messages, ownership, received, unique, waitFor } from './bus.contract-support.js';

export interface BusFixture {
  bus: Bus;
  /** Closes the bus and opens a new one on the same storage (log and committed offsets). */
  reopen?(): Promise<Bus>;
  /** Closes whatever bus is current and removes its storage. */
  cleanup(): Promise<void>;
}

export interface BusContractOptions {
  /** How long to wait for an asynchronous delivery or rebalance. Default 5000 ms. */
  timeoutMs?: number;
}

export function busContract(name: string, factory: () => Promise<BusFixture>, options: BusContractOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 5000;

  describe(`Bus contract: ${name}`, () => {
    let fixture: BusFixture;
    let bus: Bus;
    let consumers: Consumer[];

    beforeEach(async () => {
      fixture = await factory();
      bus = fixture.bus;
      consumers = [];
    });

    afterEach(async () => {
      for (const c of consumers) await c.close();
      await fixture.cleanup();
    });

    async function consume(o: ConsumerOptions): Promise<Consumer> {
      const consumer = await bus.consume(o);
      consumers.push(consumer);
      return consumer;
    }

    const firstIdsOfKey = (all: readonly DeliveredMessage[], key: string): string[] => [...new Set(all.filter((m) => m.key === key).map((m) => m.id))];

    it('delivers the messages of one key in publish order with id, key, value and headers intact', async () => {
      const topic = unique('order');
      const published: BusMessage[] = [];
      for (let call = 0; call < 4; call++) {
        const batch = messages(6, (i) => (i % 2 === 0 ? 'the-key' : `other-${call}-${i}`));
        batch[0]!.headers = { 'content-type': 'application/json', call: String(call) };
        await bus.publish(topic, batch);
        published.push(...batch);
      }
      const got = received();
      await consume({ topic, groupId: unique('g'), handle: got.handle });
      await waitFor('every message', () => got.hasAll(published), timeoutMs);

      const keyed = published.filter((m) => m.key === 'the-key').map((m) => m.id);
      expect(firstIdsOfKey(got.all, 'the-key')).toEqual(keyed);
      for (const sent of published) {
        const first = got.all.find((m) => m.id === sent.id)!;
        expect({ id: first.id, key: first.key, value: first.value, headers: first.headers }).toEqual({
          id: sent.id,
          key: sent.key,
          value: sent.value,
          headers: sent.headers,
        });
        expect(first.topic).toBe(topic);
        expect(first.partition).toBe(bus.partitionOf(sent.key));
      }
      const offsets = got.all.filter((m) => m.key === 'the-key').map((m) => m.offset);
      expect(offsets.every((o, i) => i === 0 || o > offsets[i - 1]!)).toBe(true);
    });

    it('delivers every message at least once to each of two groups', async () => {
      const topic = unique('fanout');
      const sent = messages(40, (i) => `key-${i}`);
      await bus.publish(topic, sent);
      const first = received();
      const second = received();
      await consume({ topic, groupId: unique('first'), handle: first.handle });
      await consume({ topic, groupId: unique('second'), handle: second.handle });
      await waitFor('both groups to receive everything', () => first.hasAll(sent) && second.hasAll(sent), timeoutMs);
    });

    it('starts a group with fromBeginning false at messages published after it joined', async () => {
      const topic = unique('latest');
      const old = messages(8, (i) => `key-${i}`);
      await bus.publish(topic, old);
      const own = ownership();
      const got = received();
      await consume({ topic, groupId: unique('g'), handle: got.handle, fromBeginning: false, ...own.listeners('m') });
      await waitFor('the member to own every partition', () => own.owned('m').length === bus.partitions, timeoutMs);
      const fresh = messages(8, (i) => `key-${i}`);
      await bus.publish(topic, fresh);
      await waitFor('the new messages', () => got.hasAll(fresh), timeoutMs);
      expect(old.filter((m) => got.ids().has(m.id))).toEqual([]);
    });

    it('resumes a group after its last committed offset when a new member replaces a closed one', async () => {
      const topic = unique('resume');
      const groupId = unique('g');
      const before = messages(12, (i) => `key-${i % 6}`);
      await bus.publish(topic, before);
      const firstMember = received();
      const c1 = await consume({ topic, groupId, handle: firstMember.handle });
      await waitFor('the first member to handle everything', () => firstMember.hasAll(before), timeoutMs);
      await c1.close();
      const handledByFirst = firstMember.all.length;

      // Same keys, so a redelivered earlier message would arrive before these in its partition.
      const after = messages(12, (i) => `key-${i % 6}`);
      await bus.publish(topic, after);
      const secondMember = received();
      await consume({ topic, groupId, handle: secondMember.handle });
      await waitFor('the second member to handle the new messages', () => secondMember.hasAll(after), timeoutMs);

      expect(before.filter((m) => secondMember.ids().has(m.id))).toEqual([]);
      expect(firstMember.all.length).toBe(handledByFirst);
    });

    it('delivers a message again when its handler throws, and holds back later messages of its key', async () => {
      const topic = unique('retry');
      const [m1, m2, m3] = messages(3, () => 'one-key') as [BusMessage, BusMessage, BusMessage];
      await bus.publish(topic, [m1, m2, m3]);
      const attempts = new Map<string, number>();
      const outcomes: string[] = [];
      await consume({
        topic,
        groupId: unique('g'),
        handle: async (m) => {
          const n = (attempts.get(m.id) ?? 0) + 1;
          attempts.set(m.id, n);
          if (m.id === m2.id && n < 3) {
            outcomes.push(`${m.id}:failed`);
            throw new Error(`handler failure ${n}`);
          }
          outcomes.push(`${m.id}:ok`);
        },
      });
      await waitFor('the third message', () => outcomes.includes(`${m3.id}:ok`), timeoutMs);

      expect(attempts.get(m2.id)).toBeGreaterThanOrEqual(3);
      const firstOk = (id: string): number => outcomes.indexOf(`${id}:ok`);
      expect(firstOk(m1.id)).toBeLessThan(firstOk(m2.id));
      expect(outcomes.findIndex((o) => o.startsWith(m3.id))).toBeGreaterThan(firstOk(m2.id));
    });

    it('splits partitions between two members with none owned by both, and gives all to the survivor', async () => {
      expect(bus.partitions, 'the contract needs at least 2 partitions').toBeGreaterThanOrEqual(2);
      const all = Array.from({ length: bus.partitions }, (_, p) => p);
      const topic = unique('split');
      const groupId = unique('g');
      const own = ownership();
      const sent: BusMessage[] = [];
      const got = received();
      const member = (name: string): ConsumerOptions => ({
        topic,
        groupId,
        ...own.listeners(name),
        handle: async (m) => {
          if (!own.owned(name).includes(m.partition)) own.violations.push(`${name} got partition ${m.partition}`);
          await got.handle(m);
        },
      });
      const publish = async (n: number): Promise<void> => {
        const batch = messages(n, () => unique('key'));
        sent.push(...batch);
        await bus.publish(topic, batch);
      };

      await consume(member('a'));
      await waitFor('a to own every partition', () => own.owned('a').length === all.length, timeoutMs);
      await publish(30);
      const b = await consume(member('b'));
      await publish(30);
      await waitFor(
        'a and b to share the partitions',
        () => own.owned('a').length > 0 && own.owned('b').length > 0 && own.owned('a').length + own.owned('b').length === all.length,
        timeoutMs,
      );
      expect([...own.owned('a'), ...own.owned('b')].sort((x, y) => x - y)).toEqual(all);
      expect(own.revokedFrom('a')).toEqual(expect.arrayContaining(own.owned('b')));
      await publish(30);
      await waitFor('every message while shared', () => got.hasAll(sent), timeoutMs);

      const ownedByB = own.owned('b');
      await b.close();
      await waitFor('a to own every partition again', () => own.owned('a').length === all.length, timeoutMs);
      expect(own.revokedFrom('b')).toEqual(expect.arrayContaining(ownedByB));
      expect(own.assignedTo('a')).toEqual(expect.arrayContaining(ownedByB));
      await publish(30);
      await waitFor('every message after b left', () => got.hasAll(sent), timeoutMs);
      expect(own.violations).toEqual([]);
    });

    it('with incrementalRebalance, revokes only the partitions that move: a member keeps the others through every rebalance', async () => {
      const all = Array.from({ length: bus.partitions }, (_, p) => p);
      const topic = unique('incremental');
      const groupId = unique('g');
      const owned = { a: new Set<number>(), b: new Set<number>() };
      const revoked = { a: [] as number[], b: [] as number[] };
      const sorted = (ps: Iterable<number>) => [...ps].sort((x, y) => x - y);
      const member = (name: 'a' | 'b'): ConsumerOptions => ({
        topic,
        groupId,
        incrementalRebalance: true,
        handle: async () => undefined,
        onAssign: (ps) => {
          for (const p of ps) owned[name].add(p);
        },
        onRevoke: (ps) => {
          for (const p of ps) owned[name].delete(p);
          revoked[name].push(...ps);
        },
      });

      await consume(member('a'));
      await waitFor('a to own every partition', () => owned.a.size === all.length, timeoutMs);
      const b = await consume(member('b'));
      await waitFor(
        'a and b to share the partitions',
        () => owned.b.size > 0 && owned.a.size + owned.b.size === all.length && [...owned.a].every((p) => !owned.b.has(p)),
        timeoutMs,
      );
      // a gave up exactly what b was given (an eager hand-over revokes all of them first).
      expect(sorted(revoked.a)).toEqual(sorted(owned.b));
      const revokedWhileShared = sorted(revoked.a);
      await b.close();
      await waitFor('a to own every partition again', () => owned.a.size === all.length, timeoutMs);
      // b left: a was assigned b's partitions and lost none of its own.
      expect(sorted(revoked.a)).toEqual(revokedWhileShared);
    });

    it('maps a key to a stable partition within range, the one Kafka’s murmur2 partitioner picks', () => {
      for (const key of ['', 'a', 'task-123', 'acct_42', 'é€任务', unique('k')]) {
        const p = bus.partitionOf(key);
        expect(Number.isInteger(p) && p >= 0 && p < bus.partitions).toBe(true);
        expect(bus.partitionOf(key)).toBe(p);
        expect(p).toBe(partitionForKey(key, bus.partitions));
      }
    });

    it('answers ping while open', async () => {
      await expect(bus.ping()).resolves.toBeUndefined();
    });

    it('resumes a group from its committed offsets after the bus is reopened', async () => {
      if (!fixture.reopen) throw new Error(`the ${name} fixture must provide reopen() to prove durable offsets`);
      const topic = unique('reopen');
      const groupId = unique('g');
      const before = messages(10, (i) => `key-${i % 5}`);
      await bus.publish(topic, before);
      const first = received();
      await consume({ topic, groupId, handle: first.handle });
      await waitFor('everything before reopening', () => first.hasAll(before), timeoutMs);

      bus = await fixture.reopen();
      const after = messages(10, (i) => `key-${i % 5}`);
      await bus.publish(topic, after);
      const second = received();
      await consume({ topic, groupId, handle: second.handle });
      await waitFor('the messages published after reopening', () => second.hasAll(after), timeoutMs);
      expect(before.filter((m) => second.ids().has(m.id))).toEqual([]);
    });
  });
}
