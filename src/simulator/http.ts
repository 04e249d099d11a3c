/**
 * HTTP helpers shared by the simulated upstreams: errors with a per-family body shape, bearer
 * auth, body parsing with zod, marker refusals, and the URLs of result files.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { parseMarkersOf, type SimMarkers } from './markers.js';
import { noteSubmitTexts } from './submit-log.js';

export class SimHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SimHttpError';
  }
}

export type SimErrorRenderer = (error: SimHttpError) => unknown;

/** `{code, message}`: the image, music-submit and motion families' error body. */
export const plainErrorBody: SimErrorRenderer = (error) => ({ code: error.code, message: error.message });

/** Renders anything thrown in `app`'s routes and hooks with `render`; 5xx causes stay hidden. */
export function useSimErrorShape(app: FastifyInstance, render: SimErrorRenderer): void {
  app.setErrorHandler((error: FastifyError | SimHttpError, request: FastifyRequest, reply: FastifyReply) => {
    const simError = toSimError(error);
    if (simError.status >= 500 && !(error instanceof SimHttpError)) request.log.error({ err: error }, 'simulator route failed');
    // The gateway's limits (rate limit, load shedding) refuse with a time to come back.
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
    return reply.status(simError.status).send(render(simError));
  });
}

function toSimError(error: FastifyError | SimHttpError): SimHttpError {
  if (error instanceof SimHttpError) return error;
  // A refusal of the gateway's own hooks (429 rate_limited, overloaded): its status and code.
  const refusal = error as { status?: unknown; code?: unknown };
  if (typeof refusal.status === 'number' && refusal.status >= 400 && refusal.status < 500 && typeof refusal.code === 'string')
    return new SimHttpError(refusal.status, refusal.code, error.message);
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) return new SimHttpError(status, 'invalid_request', error.message);
  return new SimHttpError(500, 'internal_error', 'simulator internal error');
}

export const notFound = (code: string, message: string): SimHttpError => new SimHttpError(404, code, message);

/** onRequest hook: every non-empty `Authorization: Bearer <key>` passes; everything else is 401. */
export async function requireBearer(request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(\S.*)$/i.exec(header.trim());
  if (!match) throw new SimHttpError(401, 'unauthorized', 'missing or malformed Authorization: Bearer <key> header');
}

/** Parses `value` with `schema`; a mismatch is HTTP 400 `invalid_request` naming the field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what = 'body'): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : what;
  throw new SimHttpError(400, 'invalid_request', `${field}: ${issue?.message ?? 'invalid'}`);
}

/**
 * Markers come from the request's text, an `x-sim-markers` header, or the caller's API key: a
 * channel whose key carries `[sim:5xx]` plays an upstream that is down for every request
 * (how failover between channels is exercised). Every family reads a submit's texts here, so
 * this is also where the submit log learns the prompt (submit-log.ts).
 */
export function requestMarkers(request: FastifyRequest, texts: ReadonlyArray<string | null | undefined>): SimMarkers {
  noteSubmitTexts(request, texts);
  const header = request.headers['x-sim-markers'];
  const headerText = Array.isArray(header) ? header.join(' ') : header;
  return parseMarkersOf([...texts, headerText, request.headers.authorization]);
}

/** Refusals decided at submit: `[sim:reject]` → 400, `[sim:5xx]` → 503; else the markers, for the submit. */
export function refuseByMarkers(markers: SimMarkers): SimMarkers {
  if (markers.reject) throw new SimHttpError(400, 'invalid_request', 'simulated rejection ([sim:reject])');
  if (markers.unavailable) throw new SimHttpError(503, 'upstream_unavailable', 'simulated outage ([sim:5xx]); retry later');
  return markers;
}

/**
 * The `*` of a wildcard route. Simulator ids are longer than fastify's default `maxParamLength`
 * (100, set by whoever creates the instance), and wildcard segments are not bound by it, so
 * routes that take an id end in `/*` rather than `/:id`.
 */
export function wildcardParam(request: FastifyRequest<{ Params: { '*': string } }>): string {
  return request.params['*'];
}

/** `http(s)://host[:port]` as the client addressed this server. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** `{origin}{prefix}/files/<id>/<name>`: where a result file of the simulator is served. */
export function fileUrl(origin: string, prefix: string, id: string, name: string): string {
  return `${origin}${prefix}/files/${encodeURIComponent(id)}/${encodeURIComponent(name)}`;
}
