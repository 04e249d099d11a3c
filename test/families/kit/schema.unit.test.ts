/**
 * The patterns kit/schema.ts writes into the OpenAPI document say what the checks beside them
 * check: the integer ranges of `wholeSeconds` exactly, the non-blank rule exactly, the image data
 * URI exactly, and an http/https URL only where isHttpUrl takes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHttpUrl, isImageDataUri } from '../../../src/families/kit/fields.js';
import { HTTP_URL_PATTERN, IMAGE_DATA_URI_PATTERN, integerRangePattern, NON_BLANK, urlOrDataUriPattern } from '../../../src/families/kit/schema.js';

/** What wholeSeconds took before the pattern said it: up to 9 digits, then the range. */
const inRange = (text: string, min: number, max: number) => /^[0-9]{1,9}$/.test(text) && Number(text) >= min && Number(text) <= max;

/** Values to try for a range: around its bounds, around every power of ten, and a sample between. */
function valuesNear(min: number, max: number): number[] {
  const anchors = [min, max, 0, ...Array.from({ length: 10 }, (_, i) => 10 ** i)];
  const out = new Set<number>();
  for (const a of anchors) for (let d = -12; d <= 12; d++) if (a + d >= 0) out.add(a + d);
  for (let i = 0; i < 200; i++) out.add(Math.floor(min + ((max - min) * i) / 199));
  return [...out];
}

describe('integerRangePattern', () => {
  const ranges: Array<[number, number]> = [
    [1, 3600],
    [0, 3600],
    [4, 15],
    [1, 4],
    [0, 0],
    [7, 7],
    [9, 10],
    [10, 99],
    [19, 21],
    [100, 1000],
    [123, 98_765],
    [1, 999_999_999],
    [0, 999_999_999],
    [999_999_998, 999_999_999],
  ];

  it.each(ranges)('from %i to %i: exactly the numeric strings of up to 9 digits in range', (min, max) => {
    const pattern = integerRangePattern(min, max);
    for (const value of valuesNear(min, max)) {
      const digits = String(value);
      for (let width = digits.length; width <= 10; width++) {
        const text = digits.padStart(width, '0');
        expect(pattern.test(text), `${text} in ${min}..${max}`).toBe(inRange(text, min, max));
      }
    }
  });

  it('every value of the small ranges, and what is no number', () => {
    for (const [min, max] of [
      [1, 3600],
      [0, 3600],
      [4, 15],
    ] as const) {
      const pattern = integerRangePattern(min, max);
      for (let value = 0; value <= 20_000; value++) expect(pattern.test(String(value)), `${value}`).toBe(value >= min && value <= max);
      for (const text of ['', ' 5', '5 ', '+5', '-5', '5.0', '1e3', '0x10', '٥', '５', 'five', '05\n'])
        expect(pattern.test(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('refuses a range it cannot say', () => {
    expect(() => integerRangePattern(-1, 5)).toThrow(RangeError);
    expect(() => integerRangePattern(5, 4)).toThrow(RangeError);
    expect(() => integerRangePattern(0, 1_000_000_000)).toThrow(RangeError);
  });
});

describe('NON_BLANK', () => {
  it('matches a string exactly when trim() leaves something (every UTF-16 code unit)', () => {
    for (let code = 0; code <= 0xffff; code++) {
      const text = String.fromCharCode(code);
      if (NON_BLANK.test(text) !== (text.trim() !== '')) expect.fail(`U+${code.toString(16)}`);
    }
    expect(NON_BLANK.test(' \t\u00a0\ufeff\u3000')).toBe(false);
    expect(NON_BLANK.test('  a ')).toBe(true);
  });
});

describe('IMAGE_DATA_URI_PATTERN', () => {
  it('is isImageDataUri for every payload of up to 8 characters over a small alphabet', () => {
    const alphabet = ['A', '/', '=', '-'];
    const payloads = [''];
    for (let start = 0; payloads[start]!.length < 8; start++) payloads.push(...alphabet.map((c) => payloads[start] + c));
    const differ: string[] = [];
    for (const payload of [...payloads, 'QUJDRA==QQ', 'QUJDRA=', 'QUJDRA===', 'QUJDRAQQ=', 'QUJDRAQ==']) {
      for (const head of ['data:image/png;base64,', 'data:image/svg+xml;base64,', 'data:image/PNG;base64,', 'data:image/;base64,', 'data:text/plain;base64,']) {
        const text = head + payload;
        if (IMAGE_DATA_URI_PATTERN.test(text) !== isImageDataUri(text)) differ.push(text);
      }
    }
    expect(differ).toEqual([]);
  });

  it('is isImageDataUri for arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string(), fc.stringMatching(/^[A-Za-z0-9+/=]{0,13}$/), (junk, payload) => {
        for (const text of [junk, `data:image/png;base64,${payload}`, `data:image/${junk};base64,${payload}`]) {
          expect(IMAGE_DATA_URI_PATTERN.test(text), text).toBe(isImageDataUri(text));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('HTTP_URL_PATTERN', () => {
  const url = new RegExp(HTTP_URL_PATTERN);

  it('admits only URLs isHttpUrl takes', () => {
    fc.assert(
      fc.property(fc.stringMatching(url), (text) => {
        expect(isHttpUrl(text), text).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('admits the usual URLs and not what isHttpUrl refuses', () => {
    for (const text of ['https://media.example.com/a.png', 'http://0.com', 'HTTPS://A.B/?q=1#x', 'https://a-b.example:8080/x y'.replace(' ', '%20')]) {
      expect(url.test(text), text).toBe(true);
    }
    for (const text of [
      'http://',
      'https:///a',
      'ftp://x',
      'http://a b',
      'http://a\u00a0',
      'http://-a.com',
      'http://xn--a.com',
      'http://1.2.3.4',
      'http://a:99999',
      ' http://a',
    ]) {
      expect(url.test(text), text).toBe(false);
    }
  });

  it('with data URIs: each alternative is what its check takes', () => {
    const either = new RegExp(urlOrDataUriPattern());
    fc.assert(
      fc.property(fc.stringMatching(either), (text) => {
        expect(isHttpUrl(text) || isImageDataUri(text), text).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
