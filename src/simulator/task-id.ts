/**
 * Stateless upstream ids. The simulator runs inside a gateway process that may be killed while
 * tasks are in flight, so it keeps no task table: everything a later GET needs is inside the id,
 * `sim_<base64url(JSON)>.<base64url(HMAC-SHA256)[0..16)>`, the JSON with a random `u` so ids are
 * unique. A tampered or foreign id fails the MAC and is treated as unknown. The ids are signed,
 * not encrypted: the payload is readable.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

export const SIM_ID_PREFIX = 'sim_';
const MAC_BYTES = 12;
/** Used when neither the `secret` option nor `SIM_SECRET` is set. */
export const DEFAULT_SIM_SECRET = 'media-gateway-simulator';

/** Every payload names the family (or file kind) that minted it, so ids do not cross routes. */
export type SimIdPayload = { readonly f: string } & Readonly<Record<string, unknown>>;

export type TaskIdCodec = Readonly<{
  encode(payload: SimIdPayload): string;
  /** The payload when the id is well formed and its MAC matches `schema`'s shape; else undefined. */
  decode<T extends SimIdPayload>(id: string, schema: z.ZodType<T>): T | undefined;
}>;

export function createTaskIdCodec(secret: string): TaskIdCodec {
  if (secret.length === 0) throw new Error('simulator secret must not be empty');
  const mac = (body: string): Buffer => createHmac('sha256', secret).update(body).digest().subarray(0, MAC_BYTES);

  return {
    encode(payload) {
      // `u`, random: two submits alike within one millisecond (two workers at once) would
      // otherwise get one id, and a gateway would follow two tasks as one upstream job.
      const body = Buffer.from(JSON.stringify({ ...payload, u: randomBytes(6).toString('base64url') }), 'utf8').toString('base64url');
      return `${SIM_ID_PREFIX}${body}.${mac(body).toString('base64url')}`;
    },
    decode(id, schema) {
      if (!id.startsWith(SIM_ID_PREFIX)) return undefined;
      const [body, tag, extra] = id.slice(SIM_ID_PREFIX.length).split('.');
      if (!body || !tag || extra !== undefined) return undefined;
      // Compare the tag text itself: base64url decoding is lenient (a trailing extra character
      // decodes to the same bytes), so comparing decoded bytes would accept altered ids.
      const given = Buffer.from(tag, 'utf8');
      const expected = Buffer.from(mac(body).toString('base64url'), 'utf8');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      let json: unknown;
      try {
        json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      const parsed = schema.safeParse(json);
      return parsed.success ? parsed.data : undefined;
    },
  };
}
