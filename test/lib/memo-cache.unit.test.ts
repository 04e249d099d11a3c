import { describe, expect, it } from 'vitest';
import { memoCache } from '../../src/lib/memo-cache.js';

describe('memoCache', () => {
  it('makes a value once per key and drops the least recently used past its bound', () => {
    const cache = memoCache<string, number>(2);
    let made = 0;
    const make = (key: string) => (made++, key.length);
    cache.getOrMake('a', make);
    cache.getOrMake('bb', make);
    expect(cache.getOrMake('a', make)).toBe(1); // kept; a is now the most recently used
    expect(made).toBe(2);
    cache.getOrMake('ccc', make); // drops bb
    expect(cache.size).toBe(2);
    cache.getOrMake('a', make);
    expect(made).toBe(3);
    cache.getOrMake('bb', make);
    expect(made).toBe(4);
  });
});
