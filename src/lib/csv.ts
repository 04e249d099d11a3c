/**
 * CSV text as RFC 4180 writes it: fields separated by commas, records by CRLF, a field quoted
 * when it holds a comma, a quote, a CR or an LF (a quote inside doubled). Beyond the RFC, two
 * conventions the readers of exports share:
 * - null is an empty unquoted field, an empty text a quoted one (`""`): PostgreSQL's `COPY … CSV`
 *   reads them so, and a reader that does not tell them apart loses nothing else.
 * - a text that begins with `=`, `+`, `-`, `@`, a tab or a CR gets a leading apostrophe, so a
 *   spreadsheet shows it instead of running it as a formula (CSV injection). Numbers are written
 *   as numbers and never touched, so only texts such as names and notes can carry one.
 */
export type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, with its CRLF. */
export const csvRecord = (values: readonly CsvValue[]): string => `${values.map(csvField).join(',')}\r\n`;
