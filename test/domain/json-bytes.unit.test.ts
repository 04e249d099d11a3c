import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes, jsonBytesAtLeast, jsonBytesAtMost } from '../../src/domain/json-bytes.js';

// Plain text: printable ASCII without a quote or backslash, as ids and model names are.
const plain = fc.string({ unit: fc.constantFrom(...' !#$%&()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~'.split('')) });
// Any text at all: escapes, controls, lone surrogates, characters of 2, 3 and 4 bytes.
const anyText = fc.string({ unit: 'binary' });

describe('the JSON size of a value', () => {
  it('is bounded from below and from above, whatever the value holds', () => {
    const values = fc.oneof(
      fc.jsonValue(),
      fc.anything({ withDate: true, withNullPrototype: true, withObjectString: true, withSparseArray: true, withBoxedValues: true }),
      fc.dictionary(anyText, fc.oneof(anyText, fc.array(anyText), fc.integer(), fc.double())),
    );
    fc.assert(
      fc.property(values, (value) => {
        const exact = jsonBytes(value);
        expect(jsonBytesAtLeast(value)).toBeLessThanOrEqual(exact);
        expect(jsonBytesAtMost(value)).toBeGreaterThanOrEqual(exact);
      }),
      { numRuns: 1000 },
    );
  });

  it('reaches the upper bound with text JSON writes as escapes, and counts only own fields', () => {
    const controls = '\u0001\u0002\u001f';
    expect(jsonBytesAtMost(controls)).toBe(jsonBytes(controls));
    const inherited = Object.create({ hidden: 'x'.repeat(100) }) as Record<string, unknown>;
    inherited.own = 1;
    expect(jsonBytesAtLeast(inherited)).toBe(jsonBytes(inherited));
    // What JSON writes through toJSON or unboxing is measured exactly, by both bounds.
    for (const value of [new Date(0), new String('boxed'), { toJSON: () => 'x'.repeat(40) }]) {
      expect([jsonBytesAtLeast(value), jsonBytesAtMost(value)]).toEqual([jsonBytes(value), jsonBytes(value)]);
    }
  });

  it('the lower bound is exact for objects of plain text, integers, booleans, nulls and missing fields, as snapshot entries are', () => {
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

  it('the lower bound is less than the exact size where JSON escapes or writes a character in more than one byte', () => {
    for (const text of ['say "hi"', 'back\\slash', 'line\nbreak', 'modèle', '画像', '😀']) {
      expect(jsonBytesAtLeast({ model: text })).toBeLessThan(jsonBytes({ model: text }));
    }
  });
});
