import { randomBytes, randomUUID } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from a pool filled 4 KiB at a time, as crypto.randomUUID caches its own:
 * one call into the system's generator per about 160 ids instead of one per id (it was 3 % of a
 * submit's time). The bytes are the same CSPRNG's.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let drawn = 0;

function randomByte(): number {
  if (drawn >= pool.length) {
    pool = randomBytes(POOL_BYTES);
    drawn = 0;
  }
  return pool[drawn++]!;
}

/** Random base62 text of the given length (unbiased: bytes >= 248 are rejected). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += alphabet[byte % 62];
  }
  return out;
}

/** A prefixed identifier such as `task_…` (spec 2.1: task ids are prefixed `task_`). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

export const newEventId = (): string => randomUUID();
