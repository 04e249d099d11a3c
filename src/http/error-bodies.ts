/**
 * The error answers of every route, declared once: the body of each error shape as a zod schema
 * (exactly what errors.ts `renderError` sends: strict objects, so a field added there and not
 * here fails the strict response serialiser of the test suite), and the statuses each kind of
 * route can answer. route-config.ts adds them to each route's `schema.response` (a route's own
 * declaration of a status wins), so the OpenAPI document lists them and the serialiser checks them.
 */
import { z } from 'zod';
import type { ErrorShape } from './errors.js';

/** The OpenAI error object (errors.ts `openaiErrorOf`): its `type` is the class of the status. */
const openaiError = (server: boolean) =>
  z.strictObject({
    message: z.string(),
    type: z.literal(server ? 'server_error' : 'invalid_request_error'),
    param: z.string().meta({ description: 'the request field or header at fault, or empty' }),
    code: z.string(),
  });

/** The body of an error answer of `shape` with `status` (errors.ts `renderError`). */
export function errorBody(shape: ErrorShape, status: number) {
  const server = status >= 500;
  switch (shape) {
    case 'plain':
      return z.strictObject({ code: z.string(), message: z.string(), error: openaiError(server) });
    case 'submit':
      return z.strictObject({
        code: server ? z.string() : z.literal('invalid_request'),
        reason: z.string().meta({ description: 'the precise code' }),
        message: z.string(),
        error: openaiError(server),
      });
    case 'openai':
      return z.strictObject({ error: openaiError(server) });
    case 'api':
      return z.strictObject({ success: z.literal(false), message: z.string(), code: z.string() });
    case 'art':
      return z.strictObject({
        code: z.literal(server ? 9 : 4).meta({ description: '4 refused or not found, 9 server error' }),
        description: z.string(),
        result: z.null(),
      });
  }
}

const DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Refused: the message names the field at fault',
  401: 'No valid credentials',
  402: 'Not enough quota for this request',
  403: 'Not allowed for these credentials',
  404: 'No such resource for this caller',
  409: 'Conflicts with what exists (an idempotency key reused with another request, a name taken)',
  413: 'The body is larger than this endpoint accepts',
  415: 'A body of a media type this endpoint does not accept',
  429: 'Too many requests (Retry-After says when to try again)',
  500: 'Server error',
  502: 'The upstream model failed',
  503: 'Busy: try again shortly (Retry-After)',
  504: 'The upstream model did not answer in time',
};

/** The route as the onRoute hook sees it, as far as its error answers depend on it. */
export interface RouteKind {
  method: string;
  url: string;
  /** Authenticated by an API key (`config.auth`), by a session, or by either. */
  credentials: boolean;
  /** The API key's own routes (the generation families): quota, idempotency, upstream calls. */
  bearer: boolean;
  /** Statuses beyond those of its kind (`config.errorStatuses`). */
  also?: readonly number[];
}

const HAS_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The error statuses a route of this kind can answer. */
export function errorStatusesOf(route: RouteKind): number[] {
  const statuses = new Set([400, 429, 500, ...(route.also ?? [])]);
  const add = (...more: number[]) => more.forEach((s) => statuses.add(s));
  if (route.credentials) add(401, 403);
  // A path parameter: nothing by that id, or a segment longer than any identifier (414).
  if (route.url.includes(':')) add(404, 414);
  if (HAS_BODY.has(route.method)) {
    // The body parsers' refusals; an id named in the body that does not exist; a conflict with
    // what exists; an account (or the login throttle's) contention.
    add(413, 415);
    if (route.credentials) add(404, 409, 503);
  }
  // A generation submit or call: the account's quota, an upstream model called while the client waits.
  if (route.bearer && route.method === 'POST') add(402, 502, 504);
  return [...statuses].sort((a, b) => a - b);
}

/** The `schema.response` entries of these statuses in `shape`. */
export function errorAnswers(shape: ErrorShape, statuses: readonly number[]): Record<number, z.ZodType> {
  return Object.fromEntries(statuses.map((status) => [status, errorBody(shape, status).meta({ description: DESCRIPTIONS[status] ?? `Refused (${status})` })]));
}
