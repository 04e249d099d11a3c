/**
 * The one seeded random source of a simulation run: every interleaving, fault and upstream
 * behaviour is drawn from it, so a seed replays to the same trace. pure-rand's xoroshiro128+
 * (a mutable generator: each draw advances it).
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformInt } from 'pure-rand/distribution/uniformInt';

export interface Random {
  /** An integer in [from, to], both included. */
  int(from: number, to: number): number;
  /** A float in [0, 1), as Math.random. */
  float(): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `length` bytes. */
  bytes(length: number): Buffer;
}

export function seededRandom(seed: number): Random {
  const rng = xoroshiro128plus(seed);
  const float = () => uniformInt(rng, 0, 0x1fffffff) / 0x20000000;
  return {
    int: (from, to) => uniformInt(rng, from, to),
    float,
    chance: (p) => p > 0 && float() < p,
    pick: (items) => items[uniformInt(rng, 0, items.length - 1)]!,
    bytes(length) {
      const out = Buffer.allocUnsafe(length);
      for (let i = 0; i < length; i++) out[i] = uniformInt(rng, 0, 255);
      return out;
    },
  };
}
