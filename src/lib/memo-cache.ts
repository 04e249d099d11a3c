/**
 * A value made once per key and kept, at most `max` of them (the least recently used go first):
 * for things that are costly to make again and few in kind (prepared statements per query shape,
 * simulated media per size). `lru-cache` does the bookkeeping.
 */
import { LRUCache } from 'lru-cache';

export interface MemoCache<K, V> {
  /** The kept value for `key`, else `make(key)`, kept. */
  getOrMake(key: K, make: (key: K) => V): V;
  readonly size: number;
}

export function memoCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(max: number): MemoCache<K, V> {
  const cache = new LRUCache<K, V>({ max });
  return {
    getOrMake(key, make) {
      const kept = cache.get(key);
      if (kept !== undefined) return kept;
      const made = make(key);
      cache.set(key, made);
      return made;
    },
    get size() {
      return cache.size;
    },
  };
}
