/**
 * CSV answers (RFC 4180): a header row, then one row per record, CRLF line ends, a field quoted
 * when it holds a comma, a quote or a line break. A field that a spreadsheet would read as a
 * formula (`=`, `+`, `-`, `@` first) is prefixed with `'`, so an exported prompt cannot run in
 * the reader's spreadsheet (OWASP's CSV injection advice); numbers are written as they are.
 */
import type { FastifyReply } from 'fastify';

export type CsvValue = string | number | boolean | null | undefined;

function field(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvOf(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(field).join(',')];
  for (const row of rows) lines.push(row.map(field).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Sends `body` as a CSV download named `filename`. */
export function sendCsv(reply: FastifyReply, filename: string, body: string): FastifyReply {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(body);
}
