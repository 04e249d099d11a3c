/**
 * Errors as clients see them. Handlers throw GatewayError (or let validation fail); one error
 * handler per family shape renders the spec's body (spec section 7). Nothing else ever leaks.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifySchemaValidationError } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AccountContendedError } from '../engine/accounts/account-service.js';
import { EventTooLargeError } from '../ports/event-store.js';
import { Refusal, Throttled, type RefusalKind } from '../domain/refusal.js';
import { StoreUnavailableError } from '../ports/store-unavailable.js';

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param?: string,
    /** A refusal that passes with time (429): when to try again, sent as `Retry-After`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export const invalidRequest = (param: string, message: string): GatewayError => new GatewayError(400, 'invalid_request', `${param}: ${message}`, param);

/**
 * The error body families:
 * - plain: `{code, message}` (async/sync images, tune, motion, models), plus `error`
 * - submit: plain for the async image and tune submits, whose refusals all answer `code` =
 *   `invalid_request` (spec 7), the precise code kept as `reason` and in `error.code`
 * - openai: `{error:{message, type, param, code}}` all strings (clip, vidgen, Vid-H3)
 * - api: `{success:false, message}` (user, token and admin routes)
 * - art: `{code: <number>, description, result: null}` (4 = refused or not found, 9 = server error)
 *
 * `error` beside the spec's `code` and `message` is the openai object: OpenAI-style SDKs (the
 * official `openai` client among them) read only `body.error`, and without it report
 * `400 status code (no body)` for every refusal of the OpenAI-compatible routes.
 */
export type ErrorShape = 'plain' | 'submit' | 'openai' | 'api' | 'art';

/** The OpenAI error object: the precise code, its class as `type`, the field at fault or ''. */
function openaiErrorOf(err: GatewayError) {
  return { message: err.message, type: err.status >= 500 ? 'server_error' : 'invalid_request_error', param: err.param ?? '', code: err.code };
}

export function renderError(shape: ErrorShape, err: GatewayError): unknown {
  switch (shape) {
    case 'plain':
      return { code: err.code, message: err.message, error: openaiErrorOf(err) };
    case 'submit':
      // A server failure is not a rejected submit: it keeps its own code.
      return { code: err.status >= 500 ? err.code : 'invalid_request', reason: err.code, message: err.message, error: openaiErrorOf(err) };
    case 'openai':
      return { error: openaiErrorOf(err) };
    case 'api':
      return { success: false, message: err.message, code: err.code };
    case 'art':
      // 1 means success in this family; every refusal (not found, validation, auth) is 4.
      return { code: err.status >= 500 ? 9 : 4, description: err.message, result: null };
  }
}

/**
 * Client-caused errors that fastify, its body parsers and @fastify/multipart raise, by code:
 * the status the client gets, and the field or header at fault. Their own messages name
 * neither, and some carry statuses that do not fit (406 for a form that is not one).
 */
const CLIENT_FAULTS: Readonly<Record<string, { status: number; code: string; param: string; message: string }>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    param: 'content-type',
    message: 'this media type is not accepted by this endpoint',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'request_too_large', param: 'body', message: 'larger than this endpoint accepts' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request', param: 'content-length', message: 'does not match the size of the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_request', param: 'body', message: 'empty, but content-type says application/json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_request', param: 'body', message: 'not valid JSON (or it has a __proto__ or constructor key)' },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_request', param: 'path', message: 'not a valid URL path (bad percent-encoding)' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', param: 'path', message: 'a path segment is longer than any identifier' },
  FST_PROTO_VIOLATION: { status: 400, code: 'invalid_request', param: 'body', message: 'a form field is named after an Object.prototype property' },
  FST_INVALID_JSON_FIELD_ERROR: { status: 400, code: 'invalid_request', param: 'body', message: 'a form field declared application/json is not valid JSON' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 415, code: 'unsupported_media_type', param: 'content-type', message: 'not a multipart/form-data body' },
  FST_MP_PREMATURE_CLOSE: { status: 400, code: 'invalid_request', param: 'body', message: 'the request ended before the form did' },
  FST_PARTS_LIMIT: { status: 413, code: 'request_too_large', param: 'body', message: 'too many form parts' },
  FST_FILES_LIMIT: { status: 413, code: 'request_too_large', param: 'body', message: 'too many files in the form' },
  FST_FIELDS_LIMIT: { status: 413, code: 'request_too_large', param: 'body', message: 'too many form fields' },
  FST_REQ_FILE_TOO_LARGE: { status: 413, code: 'request_too_large', param: 'body', message: 'a file in the form is too large' },
};

const STATUS_CODES: Readonly<Record<number, string>> = {
  404: 'not_found',
  413: 'request_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/** The HTTP status of each kind of refusal (src/domain/refusal.ts). */
export const STATUS_OF_REFUSAL: Readonly<Record<RefusalKind, number>> = {
  invalid: 400,
  insufficient_quota: 402,
  forbidden: 403,
  not_found: 404,
  client_gone: 408,
  conflict: 409,
  gone: 410,
  too_large: 413,
  internal: 500,
  upstream_failed: 502,
  upstream_timeout: 504,
};

/** Turns anything thrown in a request into a GatewayError, keeping 4xx causes client-visible. */
export function normalizeError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  // The gateway's own fault: its code and message are for the log (sendError), not the client.
  if (error instanceof Refusal && error.kind === 'internal') return new GatewayError(500, 'internal_error', 'internal error');
  if (error instanceof Refusal) return new GatewayError(STATUS_OF_REFUSAL[error.kind], error.code, error.message, error.param);
  if (error instanceof Throttled) return new GatewayError(429, error.code, error.message, undefined, error.retryAfterSeconds);
  // Contention on one account's stream: the client may simply try again (with Retry-After).
  if (error instanceof AccountContendedError) return new GatewayError(503, 'account_busy', 'quota: the account is busy with other requests; try again shortly');
  // The store's server unreachable or restarting: nothing was decided that the client cannot try again.
  if (error instanceof StoreUnavailableError)
    return new GatewayError(503, 'store_unavailable', 'the gateway cannot reach its store at the moment; try again shortly');
  // Last line of defence: submits store large inputs aside and check the size first, so only
  // what slipped past that reaches here; it is the request's size, never a server failure.
  if (error instanceof EventTooLargeError)
    return new GatewayError(413, 'request_too_large', `body: too large to record (at most ${error.limit} bytes once inline files are stored aside)`, 'body');
  if (hasZodFastifySchemaValidationErrors(error)) {
    // The library types these items through a path NodeNext cannot resolve (so `any`): name fastify's type.
    const first = error.validation[0] as FastifySchemaValidationError;
    // The field of a path such as `/body/metadata/content/0/type`.
    const field = first.instancePath.split('/').filter(Boolean).join('.') || (error.validationContext ?? 'body');
    return new GatewayError(400, 'invalid_request', `${field}: ${first.message}`, field);
  }
  const fe = error as Partial<FastifyError>;
  const known = typeof fe.code === 'string' ? CLIENT_FAULTS[fe.code] : undefined;
  if (known) return new GatewayError(known.status, known.code, `${known.param}: ${known.message}`, known.param);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Another client-caused error (a body stream the client aborted, a plugin's refusal).
    const param = fe.validationContext ?? 'request';
    return new GatewayError(fe.statusCode, STATUS_CODES[fe.statusCode] ?? 'invalid_request', `${param}: ${fe.message ?? 'invalid request'}`, param);
  }
  return new GatewayError(500, 'internal_error', 'internal error');
}

export function sendError(reply: FastifyReply, shape: ErrorShape, error: unknown): FastifyReply {
  const err = normalizeError(error);
  // The gateway's own fault (500) is an error, with its stack. Other 5xx are expected outcomes
  // (an upstream failed or timed out, no channel answered, an account busy), logged where they
  // are decided: an upstream failure is one warn line with its channel and reason (failover.ts).
  if (err.status === 500) reply.log.error({ err: error }, 'request failed');
  if (err.retryAfterSeconds !== undefined) void reply.header('retry-after', String(err.retryAfterSeconds));
  else if (err.status === 503) void reply.header('retry-after', '1');
  return reply.status(err.status).send(renderError(shape, err));
}

/**
 * The shapes of the routes of one server, by path: requests that never reach a route (no route
 * matches, a malformed path) answer in the shape of the routes whose paths they are under, else
 * plain. Keyed by the http server every encapsulated context shares.
 */
const routeShapes = new WeakMap<object, Array<{ path: string; prefix: boolean; shape: ErrorShape }>>();

/** The error shape for a URL that reached no route handler. */
export function shapeOfUrl(app: FastifyInstance, url: string): ErrorShape {
  const path = url.split('?')[0] ?? url;
  let best: { length: number; shape: ErrorShape } = { length: -1, shape: 'plain' };
  for (const route of routeShapes.get(app.server) ?? []) {
    const hit = route.prefix ? path.startsWith(route.path) : path === route.path;
    // `>=`: of two routes on one path, the one registered later.
    if (hit && route.path.length >= best.length) best = { length: route.path.length, shape: route.shape };
  }
  return best.shape;
}

/** Records a route's shape (route-config.ts, for its `config.errorShape`). */
export function recordRouteShape(server: object, url: string, shape: ErrorShape): void {
  const routes = routeShapes.get(server) ?? [];
  routeShapes.set(server, routes);
  // `/v1/videos/:task_id/content` → every path under `/v1/videos/` is this family's.
  const variable = url.search(/[:*]/);
  routes.push(variable < 0 ? { path: url, prefix: false, shape } : { path: url.slice(0, variable), prefix: true, shape });
}
