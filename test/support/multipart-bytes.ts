/**
 * A form held in memory, read exactly as a route reads a request's: through a throwaway
 * fastify instance and an injected request, so tests that have only the bytes use the same
 * parser, limits and refusals as the routes, not a second multipart decoder.
 */
import Fastify, { type FastifyRequest } from 'fastify';
import { acceptMultipart } from '../../src/families/kit/multipart.js';
import { readVidH3Form } from '../../src/families/vid-h3/multipart.js';

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export async function readFormBytes<T>(bytes: Buffer, contentType: string, read: (request: FastifyRequest) => Promise<T>): Promise<T> {
  // The bytes are already in memory: the body limit only has to let them through.
  const app = Fastify({ bodyLimit: Math.max(1, bytes.length) });
  let outcome: Outcome<T> | undefined;
  try {
    await acceptMultipart(app);
    app.post('/', async (request) => {
      try {
        outcome = { ok: true, value: await read(request) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      return null;
    });
    await app.inject({ method: 'POST', url: '/', headers: { 'content-type': contentType }, payload: bytes });
  } finally {
    await app.close();
  }
  if (!outcome) throw new Error('the form never reached the reader (not multipart/form-data?)');
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** A Vid-H3 form's bytes decoded as a request carrying them would be. */
export function decodeForm(bytes: Buffer, contentType: string): ReturnType<typeof readVidH3Form> {
  return readFormBytes(bytes, contentType, readVidH3Form);
}
