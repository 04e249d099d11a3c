import { describe, expect, it } from 'vitest';
import { planSticky } from '../../src/adapters/kafka/sticky-assigner.js';

const range = (n: number) => Array.from({ length: n }, (_, p) => p);
const moved = (before: Map<string, number[]>, after: Map<string, number[]>) =>
  [...after].reduce((n, [id, ps]) => n + ps.filter((p) => !(before.get(id) ?? []).includes(p)).length, 0);
const all = (plan: Map<string, number[]>) => [...plan.values()].flat().sort((a, b) => a - b);

describe('sticky assignment (the Kafka members with incremental rebalancing)', () => {
  it('deals a new group out evenly, each partition once', () => {
    const plan = planSticky(['c', 'a', 'b'], range(16), new Map());
    expect(all(plan)).toEqual(range(16));
    expect([...plan.values()].map((ps) => ps.length).sort()).toEqual([5, 5, 6]);
  });

  it('a fourth member joining three moves only its share (4 of 16; round-robin moves about 10)', () => {
    const three = planSticky(['w1', 'w2', 'w3'], range(16), new Map());
    const four = planSticky(['w1', 'w2', 'w3', 'w4'], range(16), three);
    expect(all(four)).toEqual(range(16));
    expect(four.get('w4')).toHaveLength(4);
    for (const id of ['w1', 'w2', 'w3']) expect(three.get(id)).toEqual(expect.arrayContaining(four.get(id)!));
    expect(moved(three, four)).toBe(4);
  });

  it('a member leaving: the others keep theirs and share its partitions', () => {
    const four = planSticky(['w1', 'w2', 'w3', 'w4'], range(16), new Map());
    const remaining = new Map([...four].filter(([id]) => id !== 'w2'));
    const three = planSticky(['w1', 'w3', 'w4'], range(16), remaining);
    expect(all(three)).toEqual(range(16));
    for (const id of ['w1', 'w3', 'w4']) expect(three.get(id)).toEqual(expect.arrayContaining(four.get(id)!));
    expect(moved(remaining, three)).toBe(4);
  });

  it('a partition claimed twice goes to one member; claims of partitions that do not exist are ignored', () => {
    const plan = planSticky(
      ['a', 'b'],
      range(4),
      new Map([
        ['a', [0, 1, 7]],
        ['b', [1, 2]],
      ]),
    );
    expect(all(plan)).toEqual(range(4));
    expect(plan.get('a')).toEqual(expect.arrayContaining([0, 1]));
    expect(plan.get('b')).toEqual(expect.arrayContaining([2]));
  });
});
