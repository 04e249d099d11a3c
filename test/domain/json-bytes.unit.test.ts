import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes, jsonBytesAtLeast } from '../../src/domain/json-bytes.js';

// Plain text: printable ASCII without a quote or backslash, as ids and model names are.
const plain = fc.string({ unit: fc.constantFrom(...' !#$%&()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~'.split('')) });

describe('the JSON size of a value', () => {
  it('is never over the exact size, whatever the text (quotes, backslashes, controls, any Unicode)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.anything(), (json, anything) => {
        expect(jsonBytesAtLeast(json)).toBeLessThanOrEqual(jsonBytes(json));
        // Values JSON leaves out or turns to null (undefined, functions in objects) are counted so too.
        if (typeof anything !== 'bigint' && !containsBigint(anything)) expect(jsonBytesAtLeast(anything)).toBeLessThanOrEqual(jsonBytes(anything));
      }),
      { numRuns: 500 },
    );
  });

  it('is exact for objects of plain text, integers, booleans, nulls and missing fields, as snapshot entries are', () => {
    const entry = fc.record(
      {
        reservationId: plain,
        amount: fc.integer(),
        taskId: plain,
        model: plain,
        tokenId: fc.option(plain, { nil: undefined }),
        flag: fc.boolean(),
        gone: fc.constant(null),
      },
      { requiredKeys: ['reservationId', 'amount'] },
    );
    fc.assert(
      fc.property(fc.array(entry), fc.array(plain), (entries, ids) => {
        expect(jsonBytesAtLeast(entries)).toBe(jsonBytes(entries));
        expect(jsonBytesAtLeast({ entries, ids })).toBe(jsonBytes({ entries, ids }));
      }),
      { numRuns: 300 },
    );
  });

  it('is less than the exact size where JSON escapes or writes a character in more than one byte', () => {
    for (const text of ['say "hi"', 'back\\slash', 'line\nbreak', 'modèle', '画像', '😀']) {
      expect(jsonBytesAtLeast({ model: text })).toBeLessThan(jsonBytes({ model: text }));
    }
  });
});

function containsBigint(value: unknown, seen = new Set<unknown>()): boolean {
  if (typeof value === 'bigint') return true;
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).some((v) => containsBigint(v, seen));
}
