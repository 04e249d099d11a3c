import { randomUUID } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random base62 text of the given length (unbiased: bytes >= 248 are rejected). Its bytes are the
 * 15 random bytes of a version 4 UUID at a time (`randomUUID` draws from Node's cache of random
 * bytes: 0.2 µs a call, where `randomBytes` per id took 2.4 µs, with a task id per submit).
 * Nothing is kept between calls here: the deterministic simulation seeds `randomUUID` and
 * `randomBytes` for each world it runs, and a pool of our own would carry one world's bytes into
 * the next (a seed then no longer replays to the same trace).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const uuid = randomUUID();
    for (let i = 0; i < UUID_RANDOM_HEX.length && out.length < length; i += 2) {
      const byte = hexValue(uuid.charCodeAt(UUID_RANDOM_HEX[i]!)) * 16 + hexValue(uuid.charCodeAt(UUID_RANDOM_HEX[i + 1]!));
      if (byte < 248) out += alphabet[byte % 62];
    }
  }
  return out;
}

/** xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: where a version 4 UUID's 30 random hex digits are (not the version, not V). */
const UUID_RANDOM_HEX = [...'xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx'].flatMap((c, i) => (c === 'x' ? [i] : []));
/** A lower-case hex digit's value (`randomUUID` writes lower case). */
const hexValue = (code: number): number => (code <= 57 ? code - 48 : code - 87);

/** A prefixed identifier such as `usr_…`, random throughout. */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

/** Base62 digits of a millisecond time: 9 of them reach the year 428,000, and sort as the times do (the alphabet is in ASCII order). */
const TIME_DIGITS = 9;

function timeBase62(ms: number): string {
  let out = '';
  for (let i = 0, rest = Math.max(0, Math.trunc(ms)); i < TIME_DIGITS; i++, rest = Math.floor(rest / 62)) out = alphabet[rest % 62]! + out;
  return out;
}

/**
 * A task id (spec 2.1: prefixed `task_`): 24 base62 characters, the first 9 the creation time in
 * milliseconds and the other 15 random (89 bits). Ids made later sort later, so a new task's
 * stream and view documents are inserted at the end of their indexes, where the other recent
 * ones are, instead of at a random page of each (decision 0162).
 */
export const newTaskId = (): string => `task_${timeBase62(Date.now())}${randomBase62(24 - TIME_DIGITS)}`;

/**
 * An event id: a UUID in the layout of version 7 (RFC 9562), the first 48 bits the time in
 * milliseconds and 74 random. The event store's unique index of event ids then grows at its end
 * (a random version 4 id dirtied one random page of it per event). The random part is a version 4
 * UUID's own (`randomUUID` draws from Node's cache of random bytes; `randomBytes` per id cost 6 %
 * of the API process's samples under submits). Written here, not taken from the `uuid` package:
 * its version 7 keeps a counter and a pool of random bytes between calls, which the deterministic
 * simulation (it seeds `randomUUID` and `randomBytes` and fakes `Date` for each world) would carry
 * from one world into the next.
 */
export function newEventId(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: from the third group's second digit on it is random
  // bits and the variant, which version 7 keeps where version 4 has them.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
