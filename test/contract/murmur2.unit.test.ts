import fc from 'fast-check';
import kafkajs, { type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { murmur2, partitionForKey, toPositive } from '../../src/adapters/inproc/murmur2.js';

/** Vectors from the Kafka Java client's UtilsTest.testMurmur2 (the reference implementation). */
const JAVA_CLIENT_VECTORS: ReadonlyArray<readonly [string, number]> = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

function kafkajsPartition(key: string, partitions: number): number {
  const partitionMetadata: PartitionMetadata[] = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
  }));
  const partitioner = kafkajs.Partitioners.DefaultPartitioner();
  return partitioner({ topic: 't', partitionMetadata, message: { key, value: null } });
}

describe('murmur2 partitioner', () => {
  it.each(JAVA_CLIENT_VECTORS)('hashes %j to the Java client value %d', (key, expected) => {
    expect(murmur2(key)).toBe(expected);
  });

  it('hashes a byte array the same as the string with those UTF-8 bytes', () => {
    expect(murmur2(new Uint8Array([0x61, 0x62, 0x63]))).toBe(479470107);
    expect(murmur2(Buffer.from('é€任务', 'utf8'))).toBe(murmur2('é€任务'));
  });

  it('makes a hash positive by clearing the sign bit, not by negating it', () => {
    expect(toPositive(-790332482)).toBe(-790332482 & 0x7fffffff);
    expect(toPositive(-1)).toBe(0x7fffffff);
    expect(toPositive(479470107)).toBe(479470107);
  });

  it('picks the partition kafkajs picks for keys of every length, ASCII and Unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 1, max: 256 }), (key, n) => {
        expect(partitionForKey(key, n)).toBe(kafkajsPartition(key, n));
      }),
      { numRuns: 500 },
    );
  });

  it('is deterministic and stays within [0, partitions)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 1000 }), (key, n) => {
        const p = partitionForKey(key, n);
        expect(Number.isInteger(p)).toBe(true);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(n);
        expect(partitionForKey(key, n)).toBe(p);
      }),
    );
  });

  it('refuses a partition count that is not a positive integer', () => {
    expect(() => partitionForKey('k', 0)).toThrow(RangeError);
    expect(() => partitionForKey('k', 1.5)).toThrow(RangeError);
  });
});
