/**
 * How many bytes a value's JSON text takes (UTF-8): exactly, or bounded from below or above by
 * reading lengths only. Closing the books measures thousands of entries, and every account
 * append measures its events against the store's limit: serialising each one only to count it
 * cost more than the rest of the closing, and a second serialisation of every event submitted.
 */

/** The exact UTF-8 bytes of `JSON.stringify(value)` (`null` for what it leaves out), as the event stores measure an event's data. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

/**
 * Never more than jsonBytes(value), and equal to it when every string is printable ASCII without
 * a quote or backslash (ids, model names): a string's JSON is at least its UTF-16 length and its
 * two quotes (escapes and non-ASCII characters only add bytes).
 */
export function jsonBytesAtLeast(value: unknown): number {
  return measure(value, (text) => text.length + 2);
}

/**
 * Never less than jsonBytes(value): no UTF-16 unit takes more than 6 bytes of JSON (a `\uXXXX`
 * escape; UTF-8 writes one in at most 3), so a string is at most 6 times its length and its
 * quotes. Enough to know that an append is within the store's limit without serialising it.
 */
export function jsonBytesAtMost(value: unknown): number {
  return measure(value, (text) => 6 * text.length + 2);
}

/**
 * The JSON size of `value` with each string (and key) counted by `text`, everything else exactly:
 * an integer's is String(n); undefined fields, functions and symbols are left out of objects and
 * `null` in arrays, as JSON.stringify does. Anything but a plain object or an array (a Date, a
 * boxed string, anything with `toJSON`) is serialised and measured exactly, within both bounds.
 */
function measure(value: unknown, text: (text: string) => number): number {
  switch (typeof value) {
    case 'string':
      return text(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      if (!isPlain(value)) return jsonBytes(value);
      if (Array.isArray(value)) {
        let bytes = 2 + Math.max(0, value.length - 1);
        for (const item of value) bytes += measure(item, text);
        return bytes;
      }
      let bytes = 2;
      let fields = 0;
      // Own enumerable keys only, as JSON.stringify takes (for...in would add inherited ones).
      for (const key of Object.keys(value)) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
        bytes += text(key) + 1 + measure(field, text) + (fields++ > 0 ? 1 : 0);
      }
      return bytes;
    }
    default:
      // undefined, a function or a symbol where JSON writes `null` (an array's item, the value itself).
      return 4;
  }
}

/** An array, or an object JSON.stringify writes field by field: its prototype Object's or none, no `toJSON`. */
function isPlain(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
