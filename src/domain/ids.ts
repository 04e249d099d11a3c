import { randomBytes, randomUUID } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random base62 text of the given length (unbiased: bytes >= 248 are rejected). Drawn per call,
 * never from a pool kept between calls: the deterministic simulation seeds `randomBytes` for each
 * world it runs, and a pool would carry one world's bytes into the next (a seed then no longer
 * replays to the same trace).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62];
    }
  }
  return out;
}

/** A prefixed identifier such as `task_…` (spec 2.1: task ids are prefixed `task_`). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

export const newEventId = (): string => randomUUID();
