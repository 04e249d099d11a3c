/**
 * Kafka's default key partitioner: murmur2 (32-bit, seed 0x9747b28c) of the key's UTF-8 bytes,
 * made positive by masking the sign bit, modulo the partition count. Bit-for-bit the algorithm
 * of the Java client's `Utils.murmur2` and kafkajs's `partitioners/default/murmur2.js`, so the
 * in-process bus and the Kafka adapter put a key in the same partition.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** The signed 32-bit murmur2 hash of a key (a string is hashed as its UTF-8 bytes). */
export function murmur2(key: string | Uint8Array): number {
  const data = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const length = data.length;
  let h = SEED ^ length;

  const words = length >>> 2;
  for (let i = 0; i < words; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }

  const tail = length & ~3;
  const rest = length & 3;
  if (rest >= 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }

  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's `toPositive`: clears the sign bit (not the absolute value). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition Kafka's default partitioner picks for a keyed message. */
export function partitionForKey(key: string | Uint8Array, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  }
  return toPositive(murmur2(key)) % partitions;
}
