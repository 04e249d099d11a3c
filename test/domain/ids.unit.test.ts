import { describe, expect, it } from 'vitest';
import { newId, randomBase62 } from '../../src/domain/ids.js';

describe('ids', () => {
  it('are base62 of the asked length after the prefix', () => {
    expect(newId('task')).toMatch(/^task_[0-9A-Za-z]{24}$/);
    expect(randomBase62(7)).toMatch(/^[0-9A-Za-z]{7}$/);
  });

  it('never repeat', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId('t')));
    expect(ids.size).toBe(20_000);
  });

  it('use every symbol about equally (bytes past the last multiple of 62 are not folded in)', () => {
    const counts = new Map<string, number>();
    const text = randomBase62(620_000);
    for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 10,000 expected per symbol, σ ≈ 99 (6σ: no false alarm in millions of runs); bytes 248..255
    // folded in would give 8 symbols about 12,100 and the others about 9,700.
    for (const count of counts.values()) expect(Math.abs(count - 10_000)).toBeLessThan(600);
  });
});
