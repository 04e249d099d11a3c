/**
 * Errors as clients see them. Handlers throw GatewayError (or let validation fail); one error
 * handler per family shape renders the spec's body (spec section 7). Nothing else ever leaks.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param?: string,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export const invalidRequest = (param: string, message: string): GatewayError =>
  new GatewayError(400, 'invalid_request', `${param}: ${message}`, param);

/**
 * The error body families:
 * - plain: `{code, message}` (async/sync images, tune submit, motion, models)
 * - openai: `{error:{message, type, param, code}}` all strings (clip, vidgen, Vid-H3)
 * - api: `{success:false, message}` (user, token and admin routes)
 * - art: `{code: <number>, description, result: null}` (4 = refused or not found, 9 = server error)
 */
export type ErrorShape = 'plain' | 'openai' | 'api' | 'art';

export function renderError(shape: ErrorShape, err: GatewayError): unknown {
  switch (shape) {
    case 'plain':
      return { code: err.code, message: err.message };
    case 'openai':
      return { error: { message: err.message, type: err.status >= 500 ? 'server_error' : 'invalid_request_error', param: err.param ?? '', code: err.code } };
    case 'api':
      return { success: false, message: err.message, code: err.code };
    case 'art':
      // 1 means success in this family; every refusal (not found, validation, auth) is 4.
      return { code: err.status >= 500 ? 9 : 4, description: err.message, result: null };
  }
}

/** Names the field of a zod issue path such as `/body/metadata/content/0/type`. */
function fieldOf(instancePath: string): string {
  return instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
}

/** Turns anything thrown in a request into a GatewayError, keeping 4xx causes client-visible. */
export function normalizeError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0]!;
    const field = fieldOf(first.instancePath) || (error.validationContext ?? 'body');
    return new GatewayError(400, 'invalid_request', `${field}: ${first.message}`, field);
  }
  const fe = error as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code = fe.statusCode === 413 ? 'request_too_large' : fe.statusCode === 415 ? 'unsupported_media_type' : fe.statusCode === 429 ? 'rate_limited' : 'invalid_request';
    return new GatewayError(fe.statusCode, code, fe.message ?? 'invalid request');
  }
  return new GatewayError(500, 'internal_error', 'internal error');
}

export function sendError(reply: FastifyReply, shape: ErrorShape, error: unknown): FastifyReply {
  const err = normalizeError(error);
  if (err.status >= 500) reply.log.error({ err: error }, 'request failed');
  return reply.status(err.status).send(renderError(shape, err));
}

/** Installs the family's error and not-found handlers on an encapsulated plugin. */
export function useErrorShape(app: FastifyInstance, shape: ErrorShape): void {
  app.setErrorHandler((error, _request, reply) => sendError(reply, shape, error));
}
