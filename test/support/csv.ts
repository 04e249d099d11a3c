/**
 * Reads CSV text back into records of fields (RFC 4180; CRLF or LF between records): null for
 * an empty unquoted field, the text otherwise (src/lib/csv.ts writes null so). An apostrophe
 * written against formulas is left in place.
 */
export function parseCsv(text: string): Array<Array<string | null>> {
  const records: Array<Array<string | null>> = [];
  let record: Array<string | null> = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      i += 1;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) throw new Error('csv: a quoted field is not closed');
        value += text.slice(i, quote);
        i = quote + 1;
        if (text[i] !== '"') break;
        value += '"';
        i += 1;
      }
      record.push(value);
    } else {
      const start = i;
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') i += 1;
      record.push(i === start ? null : text.slice(start, i));
    }
    if (text[i] === ',') {
      i += 1;
      continue;
    }
    if (text[i] === '\r') i += 1;
    if (i < text.length && text[i] !== '\n') throw new Error(`csv: unexpected ${JSON.stringify(text[i])} at ${i}`);
    records.push(record);
    record = [];
    i += 1;
    if (i >= text.length) return records;
  }
}
