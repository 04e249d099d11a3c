/**
 * How many bytes a value's JSON text takes (UTF-8), exactly or as a cheap lower bound. Closing
 * the books measures thousands of entries: serialising each one only to count it cost more than
 * the rest of the closing.
 */

/** The exact UTF-8 bytes of `JSON.stringify(value)`, as the event stores measure an event's data. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

/**
 * Never more than jsonBytes(value), and equal to it when every string is printable ASCII without
 * a quote or backslash (ids, model names): a string's JSON is at least its UTF-16 length and its
 * two quotes (escapes and non-ASCII characters only add bytes), an integer's is String(n).
 * Reads lengths only, no text is made but for numbers. Undefined fields count nothing, as
 * JSON.stringify leaves them out; a leading comma is counted only after a field that is written.
 */
export function jsonBytesAtLeast(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      if (Array.isArray(value)) {
        let bytes = 2 + Math.max(0, value.length - 1);
        for (const item of value) bytes += item === undefined ? 4 : jsonBytesAtLeast(item);
        return bytes;
      }
      let bytes = 2;
      let fields = 0;
      for (const key in value) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
        bytes += key.length + 3 + jsonBytesAtLeast(field) + (fields++ > 0 ? 1 : 0);
      }
      return bytes;
    }
    default:
      // undefined, functions and symbols: left out of objects (above); a bigint would throw in JSON.stringify.
      return 0;
  }
}
