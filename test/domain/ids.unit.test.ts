import { describe, expect, it, vi, afterEach } from 'vitest';
import { newEventId, newId, newTaskId, randomBase62 } from '../../src/domain/ids.js';

describe('ids', () => {
  afterEach(() => vi.useRealTimers());

  it('are base62 of the asked length after the prefix', () => {
    expect(newId('usr', 16)).toMatch(/^usr_[0-9A-Za-z]{16}$/);
    expect(newTaskId()).toMatch(/^task_[0-9A-Za-z]{24}$/);
    expect(randomBase62(7)).toMatch(/^[0-9A-Za-z]{7}$/);
  });

  it('never repeat', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId('t')));
    expect(ids.size).toBe(20_000);
    const tasks = new Set(Array.from({ length: 20_000 }, () => newTaskId()));
    expect(tasks.size).toBe(20_000);
  });

  it('task ids made later sort later, whatever their random part (byte order, as SQLite compares text)', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const times = [0, 1, 61, 62, 3_843, 1_764_000_000_000, 1_764_000_000_001, 1_764_000_060_000, 62 ** 9 - 1];
    const ids = times.map((t) => {
      vi.setSystemTime(t);
      return newTaskId();
    });
    const sorted = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(sorted).toEqual(ids);
    vi.setSystemTime(Date.UTC(2026, 10, 29));
    // The time is the first 9 characters after the prefix; the rest is random.
    const [a, b] = [newTaskId(), newTaskId()];
    expect(a.slice(0, 14)).toBe(b.slice(0, 14));
    expect(a.slice(14)).not.toBe(b.slice(14));
  });

  it('event ids are UUIDs of version 7 that start with the time in milliseconds', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 10, 29, 12));
    const id = newEventId();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 29, 12));
    const later = Array.from({ length: 50 }, (_, i) => {
      vi.setSystemTime(Date.UTC(2026, 10, 29, 12) + i);
      return newEventId();
    });
    expect([...later].sort()).toEqual(later);
    expect(new Set(Array.from({ length: 20_000 }, newEventId)).size).toBe(20_000);
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
