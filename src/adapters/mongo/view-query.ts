/**
 * ViewStore queries in MongoDB terms, with the SQLite adapter's matching rules:
 * - keys of `where` and `sortBy` are dot paths into the document (`account.id`), validated
 *   (no empty segment, no `$` at the start of a segment, no NUL) and prefixed with `doc.`;
 * - a non-null value matches only the same JSON type: MongoDB compares BSON types, so `true`
 *   never equals 1 and '1' never equals 1 (numbers compare by value, int or double alike);
 * - `null` matches an explicit null or a missing field (MongoDB's own rule for `{f: null}`);
 * - sorting is by the path, then by id, both in the requested direction; missing and null
 *   sort first ascending, like SQLite's NULLs.
 * Known difference: a path that runs through an array matches its elements in MongoDB, while
 * SQLite's JSON paths do not; the gateway's views filter on scalar fields only.
 * Positions are stored as 64-bit integers (BSON long) up to 2^63-1 and as Decimal128 above that
 * (exact for any bigint below 10^34). The server compares numeric types by value across types,
 * so `{position: {$lt: p}}` is the position guard whichever of the two either side is, and
 * documents written as Decimal128 by earlier versions are read and guarded alike. Longs first,
 * because every event store here yields positions below 2^63, and because servers speaking the
 * wire protocol without Decimal128 (FerretDB 1.x) can then hold the views too.
 */
import { Decimal128, Long, type Document, type Sort } from 'mongodb';
import type { FindOptions, ViewFieldValue } from '../../ports/view-store.js';
import { escapeKey } from './field-names.js';

/** A stored view document. Tombstones (deletes) keep their position, with `deleted: true`. */
export interface ViewRecord {
  _id: string;
  position: StoredPosition;
  doc: unknown;
  deleted?: boolean;
}

export interface CheckpointRecord {
  _id: string;
  position: StoredPosition;
}

/** A position as stored: a long when it fits, Decimal128 above. */
export type StoredPosition = Long | Decimal128;

const LONG_MAX = 2n ** 63n - 1n;

/** Live documents only: tombstones are invisible to reads. */
export const LIVE: Document = { deleted: { $ne: true } };

export function docPath(dotPath: string): string {
  const segments = typeof dotPath === 'string' ? dotPath.split('.') : [''];
  for (const segment of segments) {
    if (segment.length === 0 || segment.startsWith('$') || segment.includes('\u0000')) {
      throw new TypeError(`unsupported view field path: ${JSON.stringify(dotPath)}`);
    }
  }
  // Stored keys are escaped (field-names.ts); a segment here has no dot and no leading `$`, so only a `%` changes.
  return `doc.${segments.map(escapeKey).join('.')}`;
}

export function whereFilter(where: Readonly<Record<string, ViewFieldValue>>): Document {
  const filter: Document = { ...LIVE };
  for (const [field, value] of Object.entries(where)) {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError(`view field ${field}: cannot match a non-finite number`);
    }
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      throw new TypeError(`view field ${field}: match values are strings, numbers, booleans or null`);
    }
    filter[docPath(field)] = value === null ? null : { $eq: value };
  }
  return filter;
}

export function sortOf(options: FindOptions): Sort {
  const direction = options.desc ? -1 : 1;
  if (options.sortBy === undefined) return { _id: direction };
  return { [docPath(options.sortBy)]: direction, _id: direction };
}

/** Index keys that serve a query shape: equality fields (by name), then the sort field. */
export function indexKeysFor(where: Readonly<Record<string, ViewFieldValue>>, sortBy: string | undefined): string[] {
  const keys = Object.keys(where).map(docPath).sort();
  if (sortBy !== undefined) {
    const sortKey = docPath(sortBy);
    if (!keys.includes(sortKey)) keys.push(sortKey);
  }
  return keys;
}

export function toStoredPosition(position: bigint): StoredPosition {
  if (typeof position !== 'bigint' || position < 0n) {
    throw new TypeError(`position must be a non-negative bigint, got ${String(position)}`);
  }
  return position <= LONG_MAX ? Long.fromBigInt(position) : Decimal128.fromString(position.toString());
}

/** Reads a stored position: a long (the driver hands out small ones as numbers) or Decimal128. */
export function fromStoredPosition(value: unknown): bigint {
  if (value instanceof Decimal128) {
    const text = value.toString();
    if (!/^\d+$/.test(text)) throw new Error(`stored position is not an integer: ${text}`);
    return BigInt(text);
  }
  if (value instanceof Long) return nonNegative(value.toBigInt());
  if (typeof value === 'bigint') return nonNegative(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return nonNegative(BigInt(value));
  throw new Error(`stored position has an unexpected type: ${typeof value}`);
}

function nonNegative(position: bigint): bigint {
  if (position < 0n) throw new Error(`stored position is negative: ${position}`);
  return position;
}

/** Collection names: `v.<view>` per view; the checkpoint collection cannot collide with them. */
export function viewCollectionName(view: string): string {
  if (typeof view !== 'string' || view.length === 0 || view.includes('$') || view.includes('\u0000')) {
    throw new TypeError(`unsupported view name: ${JSON.stringify(view)}`);
  }
  return `v.${view}`;
}

export const CHECKPOINTS = 'projection_checkpoints';
