/**
 * The MongoDB view store's query building, without a server: the SQLite matching rules in
 * MongoDB terms, position encoding, names. What MongoDB does with these queries is proven only
 * by view-store.mongo.int.test.ts, wherever Docker or MONGO_URL exists.
 */
import { Decimal128, Long } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { docPath, fromStoredPosition, indexKeysFor, sortOf, toStoredPosition, viewCollectionName, whereFilter } from '../../src/adapters/mongo/view-query.js';

describe('MongoDB view queries', () => {
  it('matches equality on dot paths into doc, null as null-or-missing, live documents only', () => {
    expect(whereFilter({ 'account.id': 'acc-a', final: false, progress: 1, note: null })).toEqual({
      deleted: { $ne: true },
      'doc.account.id': { $eq: 'acc-a' },
      'doc.final': { $eq: false },
      'doc.progress': { $eq: 1 },
      'doc.note': null,
    });
  });

  it('refuses paths and values it cannot express safely', () => {
    expect(() => docPath('a..b')).toThrow(/path/);
    expect(() => docPath('$where')).toThrow(/path/);
    expect(() => docPath('a.$ne')).toThrow(/path/);
    expect(() => whereFilter({ n: Number.NaN })).toThrow(/non-finite/);
  });

  it('sorts by the path then by id in one direction, by id when no sort is given', () => {
    expect(sortOf({ sortBy: 'createdAt', desc: true })).toEqual({ 'doc.createdAt': -1, _id: -1 });
    expect(sortOf({})).toEqual({ _id: 1 });
  });

  it('indexes a query shape by its equality paths, then its sort path', () => {
    expect(indexKeysFor({ userId: 'u', active: true }, 'createdAt')).toEqual(['doc.active', 'doc.userId', 'doc.createdAt']);
    expect(indexKeysFor({}, undefined)).toEqual([]);
  });

  it('stores positions as longs, Decimal128 above 2^63-1, and reads either back exactly', () => {
    const longMax = 2n ** 63n - 1n;
    expect(toStoredPosition(longMax)).toBeInstanceOf(Long);
    expect(toStoredPosition(longMax + 1n)).toBeInstanceOf(Decimal128);
    for (const position of [0n, 2n ** 53n + 1n, longMax, longMax + 1n, 2n ** 64n + 11n]) {
      expect(fromStoredPosition(toStoredPosition(position))).toBe(position);
    }
    // What the driver hands out: small longs as numbers; Decimal128 as earlier versions wrote.
    expect(fromStoredPosition(42)).toBe(42n);
    expect(fromStoredPosition(Decimal128.fromString('42'))).toBe(42n);
    expect(() => fromStoredPosition(Decimal128.fromString('1.5'))).toThrow(/integer/);
    expect(() => fromStoredPosition(1.5)).toThrow(/type/);
    expect(() => toStoredPosition(-1n)).toThrow(/non-negative/);
  });

  it('names one collection per view, apart from the checkpoints collection', () => {
    expect(viewCollectionName('image.task')).toBe('v.image.task');
    expect(viewCollectionName('checkpoints')).not.toBe('projection_checkpoints');
    expect(() => viewCollectionName('a$b')).toThrow(/view name/);
  });
});
