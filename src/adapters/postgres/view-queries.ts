/**
 * How the PostgreSQL ViewStore holds documents in jsonb, and the SQL of its find/count: the same
 * answers as the SQLite adapter's (../sqlite/view-queries.ts), whatever the database's collation.
 *
 * Storage: jsonb refuses two things JSON.stringify writes, the NUL character and lone surrogates
 * (both as \u escapes), and the projections fold text from events (upstream errors, prompts) that
 * may hold either. A document that could not be stored would stop its projection for good, so
 * they are stored as U+FFFF plus the four hex digits of the escape, and U+FFFF itself as U+FFFF
 * ffff: a one-to-one encoding, undone on the way out, applied to compared values and field names
 * alike, so equality still holds exactly. Strings holding them sort by their encoded form.
 * jsonb keeps an object's keys in an order of its own (shorter first): a document comes back
 * equal to what was written, not with its keys in the order written.
 *
 * Matching: paths are validated like SQLite's and inlined as literals (so an expression index on
 * the same expression can serve them); values are always bound. `->` with a text key never indexes
 * into an array, as SQLite's `$."1"` does not. jsonb equality matches booleans only to booleans,
 * numbers only to numbers, strings only to strings; `null` matches an explicit null or a missing
 * field (NULLIF folds the first into the second).
 *
 * Sorting, as SQLite sorts json_extract's values: missing and null first, then numbers and
 * booleans (as 1 and 0) by value, then strings by code point, objects and arrays among them as
 * their JSON text (jsonb's text: its key order and spacing, not SQLite's). Two keys give that
 * order: the text of text-like values in the "C" collation, then the numeric value.
 */
import type { FindOptions, ViewFieldValue } from '../../ports/view-store.js';

const MARK = '\uffff';
const NEEDS_ENCODING = /\\u(?:0000|d[89a-f])|\uffff/;
/** Escaped backslashes are matched (and kept) so that `\\u0000` is never read as an escape. */
const UNSTORABLE = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})|\uffff/g;
const ENCODED = /\uffff([0-9a-f]{4})/g;

/** JSON text (as JSON.stringify writes it) that jsonb accepts, for documents and compared values. */
export function storableJson(json: string): string {
  if (!NEEDS_ENCODING.test(json)) return json;
  return json.replace(UNSTORABLE, (match) => (match === '\\\\' ? match : match === MARK ? `${MARK}ffff` : `${MARK}${match.slice(2)}`));
}

/** The JSON text a document was written as, from jsonb's text of it. */
export function readableJson(stored: string): string {
  return stored.includes(MARK) ? stored.replace(ENCODED, '\\u$1') : stored;
}

/** A view name or document id as a text column can hold it: no NUL, no lone surrogate. */
export function storableKey(key: string): boolean {
  return !/[\u0000\ud800-\udfff]/u.test(key);
}

/** An SQL string literal of any text: an E'' literal reads the same whatever standard_conforming_strings says. */
export function sqlLiteral(text: string): string {
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

function fieldPath(dotPath: string): string {
  const segments = dotPath.split('.');
  for (const segment of segments) {
    if (segment.length === 0 || /["'\\\u0000-\u001f]/.test(segment)) {
      throw new TypeError(`unsupported view field path: ${JSON.stringify(dotPath)}`);
    }
  }
  return `doc${segments.map((segment) => ` -> ${sqlLiteral(JSON.parse(storableJson(JSON.stringify(segment))) as string)}`).join('')}`;
}

export interface ViewQuery {
  text: string;
  values: (string | number | null)[];
  /** The index columns that serve it, in order (none: no index is worth making). */
  indexColumns: string[];
}

interface Filter {
  sql: string;
  values: string[];
  columns: string[];
}

function filterOf(where: Readonly<Record<string, ViewFieldValue>>): Filter {
  const conditions: string[] = [];
  const values: string[] = [];
  const columns: string[] = [];
  for (const [field, value] of Object.entries(where)) {
    const expression = `NULLIF(${fieldPath(field)}, 'null'::jsonb)`;
    columns.push(`(${expression})`);
    if (value === null) {
      conditions.push(`${expression} IS NULL`);
      continue;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError(`view field ${field}: cannot match a non-finite number`);
    }
    values.push(storableJson(JSON.stringify(value)));
    conditions.push(`${expression} = $${values.length}::jsonb`);
  }
  return { sql: conditions.map((condition) => ` AND ${condition}`).join(''), values, columns };
}

function orderOf(options: FindOptions): { sql: string; columns: string[] } {
  const direction = options.desc ? 'DESC' : 'ASC';
  if (options.sortBy === undefined) return { sql: ` ORDER BY id ${direction}`, columns: [] };
  const path = fieldPath(options.sortBy);
  const text = `(CASE WHEN jsonb_typeof(${path}) IN ('string', 'object', 'array') THEN ${path} #>> '{}' END) COLLATE "C"`;
  const number = `CASE jsonb_typeof(${path}) WHEN 'number' THEN (${path})::numeric WHEN 'boolean' THEN (${path})::boolean::int END`;
  // Ascending, SQLite puts NULLs first; descending is the exact reverse, one index serves both.
  const nulls = options.desc ? 'NULLS LAST' : 'NULLS FIRST';
  return {
    sql: ` ORDER BY ${text} ${direction} ${nulls}, ${number} ${direction} ${nulls}, id ${direction}`,
    columns: [`(${text}) NULLS FIRST`, `(${number}) NULLS FIRST`],
  };
}

/** Live documents of a view, with the view as a literal: a query a partial index of that view's can serve. */
const liveOf = (view: string) => `FROM view_documents WHERE view = ${sqlLiteral(view)} AND doc IS NOT NULL`;

export function findQuery(view: string, where: Readonly<Record<string, ViewFieldValue>>, options: FindOptions = {}): ViewQuery {
  const filter = filterOf(where);
  const order = orderOf(options);
  const limit = options.limit === undefined ? null : Math.max(0, Math.trunc(options.limit));
  const offset = Math.max(0, Math.trunc(options.offset ?? 0));
  const next = filter.values.length + 1;
  const indexColumns = [...filter.columns, ...order.columns];
  return {
    text: `SELECT id, position, doc::text AS doc ${liveOf(view)}${filter.sql}${order.sql} LIMIT $${next}::bigint OFFSET $${next + 1}::bigint`,
    values: [...filter.values, limit, offset],
    indexColumns: indexColumns.length === 0 ? [] : [...indexColumns, 'id'],
  };
}

/** No index of its own: a find's index on the same fields serves it (its leading columns). */
export function countQuery(view: string, where: Readonly<Record<string, ViewFieldValue>>): ViewQuery {
  const filter = filterOf(where);
  return { text: `SELECT count(*) AS n ${liveOf(view)}${filter.sql}`, values: filter.values, indexColumns: [] };
}

/**
 * The index that serves one view's query shape: the equality expressions, then the sort's, then
 * the id, over that view's live documents only (a partial index: writes to other views never
 * touch it). A query uses it when it names the view as the same literal (`liveOf`).
 */
export function shapeIndexSql(view: string, columns: readonly string[], name: string): string {
  return `CREATE INDEX IF NOT EXISTS ${name} ON view_documents (${columns.join(', ')}) WHERE view = ${sqlLiteral(view)} AND doc IS NOT NULL`;
}
