/**
 * View documents are the projections' JSON, whose object keys may be anything: model names
 * with a dot (`motion3.0-video`, keys of the price table), and in principle a leading `$`.
 * MongoDB reads a dot in a key as a path and a leading `$` as an operator in updates and
 * queries (and servers speaking its protocol, FerretDB among them, refuse such keys outright),
 * so every key is stored escaped and read back as it was: `%` → `%25` first (so the escape is
 * reversible), then `.` → `%2E` and a leading `$` → `%24`. Keys without those characters, the
 * overwhelming majority, are stored as they are, so query paths over them stay plain.
 */
const NEEDS_ESCAPE = /[%.]|^\$/;

export function escapeKey(key: string): string {
  if (!NEEDS_ESCAPE.test(key)) return key;
  return key.replace(/%/g, '%25').replace(/\./g, '%2E').replace(/^\$/, '%24');
}

function unescapeKey(key: string): string {
  if (!key.includes('%')) return key;
  return key.replace(/%2E/g, '.').replace(/^%24/, '$').replace(/%25/g, '%');
}

/** A JSON value with every object key escaped (arrays and scalars as they are). */
export function escapeKeys(value: unknown): unknown {
  return mapKeys(value, escapeKey);
}

export function unescapeKeys(value: unknown): unknown {
  return mapKeys(value, unescapeKey);
}

function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, rename));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[rename(key)] = mapKeys(item, rename);
  return out;
}
