/**
 * The MongoDB view store's query building, without a server: the SQLite matching rules in
 * MongoDB terms, position encoding, names. What MongoDB does with these queries is proven only
 * by view-store.mongo.int.test.ts, wherever Docker or MONGO_URL exists.
 */
import { Decimal128 } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { docPath, fromDecimal, indexKeysFor, sortOf, toDecimal, viewCollectionName, whereFilter } from '../../src/adapters/mongo/view-query.js';

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

  it('stores positions as exact Decimal128 integers and reads them back', () => {
    const big = 2n ** 63n + 11n;
    expect(fromDecimal(toDecimal(big))).toBe(big);
    expect(fromDecimal(toDecimal(0n))).toBe(0n);
    expect(() => fromDecimal(Decimal128.fromString('1.5'))).toThrow(/integer/);
    expect(() => toDecimal(-1n)).toThrow(/non-negative/);
  });

  it('names one collection per view, apart from the checkpoints collection', () => {
    expect(viewCollectionName('image.task')).toBe('v.image.task');
    expect(viewCollectionName('checkpoints')).not.toBe('projection_checkpoints');
    expect(() => viewCollectionName('a$b')).toThrow(/view name/);
  });
});
