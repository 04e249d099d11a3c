import { describe, expect, it } from 'vitest';
import { csvField, csvRecord } from '../../src/lib/csv.js';
import { parseCsv } from '../support/csv.js';

describe('CSV (RFC 4180)', () => {
  it('quotes what needs it and doubles quotes; null is empty, an empty text quoted', () => {
    expect(csvRecord(['plain', 12, -3, null, '', 'a,b', 'say "hi"', 'two\r\nlines', 'lf\nonly', true])).toBe(
      'plain,12,-3,,"","a,b","say ""hi""","two\r\nlines","lf\nonly",true\r\n',
    );
  });

  it('a text that a spreadsheet would run as a formula gets an apostrophe; numbers never do', () => {
    expect(['=SUM(A1)', '+1', '-x', '@cmd', '\tx'].map(csvField)).toEqual(["'=SUM(A1)", "'+1", "'-x", "'@cmd", "'\tx"]);
    expect(csvField(-5)).toBe('-5');
    expect(csvField('=a,b')).toBe(`"'=a,b"`);
  });

  it('reads back what it wrote, field for field (numbers as their text)', () => {
    const rows = [
      ['id', 'note', 'amount'],
      ['e1', 'top-up, "first"\r\nsecond line', 10],
      ['e2', null, -3],
      ['e3', '', 0],
      ['e4', '{"model":"m","units":2}', null],
    ];
    expect(parseCsv(rows.map(csvRecord).join(''))).toEqual(rows.map((row) => row.map((v) => (typeof v === 'number' ? String(v) : v))));
  });
});
