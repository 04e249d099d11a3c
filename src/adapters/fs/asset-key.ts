/**
 * Asset keys and content types every AssetStore accepts. A key is one or more `/`-separated
 * segments of `[A-Za-z0-9._-]`, with no `..` anywhere and no `.` segment, at most 1024
 * characters: it can name a file below a directory and never escape it.
 */
export class InvalidAssetKeyError extends Error {
  constructor(readonly key: unknown) {
    super(`invalid asset key ${JSON.stringify(key)}: use /-separated segments of [A-Za-z0-9._-], no '..'`);
    this.name = 'InvalidAssetKeyError';
  }
}

const KEY = /^[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

export function assertValidAssetKey(key: unknown): asserts key is string {
  const valid = typeof key === 'string' && key.length <= 1024 && KEY.test(key) && !key.includes('..') && key.split('/').every((segment) => segment !== '.');
  if (!valid) throw new InvalidAssetKeyError(key);
}

/** A content type is printable ASCII, 1 to 255 characters (e.g. `image/png; charset=binary`). */
export function assertValidContentType(contentType: unknown): asserts contentType is string {
  if (typeof contentType !== 'string' || !CONTENT_TYPE.test(contentType)) {
    throw new TypeError(`invalid content type ${JSON.stringify(contentType)}`);
  }
}
