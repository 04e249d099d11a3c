/** Helpers of the Bus contract suite: bounded waiting, unique names, delivery recording. */
import { randomUUID } from 'node:crypto';
import type { BusMessage, DeliveredMessage } from '../../src/ports/bus.js';

/** Polls until the condition holds; fails naming what it waited for after timeoutMs. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function unique(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** n messages with fresh ids, keyed by keyOf(i). */
export function messages(n: number, keyOf: (i: number) => string): BusMessage[] {
  return Array.from({ length: n }, (_, i) => ({ id: randomUUID(), key: keyOf(i), value: `value-${i}` }));
}

/** Records what a consumer's handler received, in delivery order. */
export interface Received {
  readonly all: DeliveredMessage[];
  readonly handle: (message: DeliveredMessage) => Promise<void>;
  ids(): Set<string>;
  hasAll(expected: readonly BusMessage[]): boolean;
}

export function received(): Received {
  const all: DeliveredMessage[] = [];
  const ids = (): Set<string> => new Set(all.map((m) => m.id));
  return {
    all,
    handle: async (message) => {
      all.push(message);
    },
    ids,
    hasAll: (expected) => {
      const seen = ids();
      return expected.every((m) => seen.has(m.id));
    },
  };
}

/** Partition ownership as seen through onAssign/onRevoke, flagging any partition with two owners. */
export interface Ownership {
  readonly violations: string[];
  owned(member: string): number[];
  listeners(member: string): {
    onAssign(partitions: readonly number[]): void;
    onRevoke(partitions: readonly number[]): void;
  };
  revokedFrom(member: string): number[];
  assignedTo(member: string): number[];
}

export function ownership(): Ownership {
  const owners = new Map<number, string>();
  const violations: string[] = [];
  const assigned = new Map<string, number[]>();
  const revoked = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, member: string, ps: readonly number[]): void => {
    map.set(member, [...(map.get(member) ?? []), ...ps]);
  };
  return {
    violations,
    owned: (member) =>
      [...owners]
        .filter(([, m]) => m === member)
        .map(([p]) => p)
        .sort((a, b) => a - b),
    listeners: (member) => ({
      onAssign(partitions) {
        push(assigned, member, partitions);
        for (const p of partitions) {
          const current = owners.get(p);
          if (current !== undefined && current !== member) {
            violations.push(`partition ${p} assigned to ${member} while ${current} owns it`);
          }
          owners.set(p, member);
        }
      },
      onRevoke(partitions) {
        push(revoked, member, partitions);
        for (const p of partitions) if (owners.get(p) === member) owners.delete(p);
      },
    }),
    revokedFrom: (member) => revoked.get(member) ?? [],
    assignedTo: (member) => assigned.get(member) ?? [],
  };
}
