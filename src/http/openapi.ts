/**
 * What the OpenAPI document says beyond each route's own request schema, derived in one place
 * from the route (method, path, the error shape of the plugin that registered it) so no route
 * can be left out: an `operationId`, a summary, the security it requires, and the error answers
 * in its family's error shape. Document only: none of this reaches the route's validation or
 * serialisation, so a refusal's body can never be turned into a 500 by a response schema.
 */
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { shapeOfUrl, type ErrorShape } from './errors.js';

type JsonSchema = Record<string, unknown>;

const str = { type: 'string' } as const;
const openaiError = { type: 'object', required: ['message', 'type', 'param', 'code'], properties: { message: str, type: str, param: str, code: str } };

/** The error body of each shape (src/http/errors.ts renderError), as the document shows it. */
const ERROR_BODIES: Readonly<Record<ErrorShape, JsonSchema>> = {
  plain: { type: 'object', required: ['code', 'message'], properties: { code: str, message: str, error: openaiError } },
  submit: { type: 'object', required: ['code', 'message'], properties: { code: str, reason: str, message: str, error: openaiError } },
  openai: { type: 'object', required: ['error'], properties: { error: openaiError } },
  api: { type: 'object', required: ['success', 'message'], properties: { success: { type: 'boolean', enum: [false] }, message: str, code: str } },
  art: {
    type: 'object',
    required: ['code', 'description'],
    properties: { code: { type: 'integer', description: '4 refused or not found, 9 server error' }, description: str, result: { type: 'null' } },
  },
};

/** Routes that need no credentials. */
const PUBLIC = new Set(['POST /api/user/login', 'POST /api/user/logout']);
/** Session routes that also take an API key. */
const SESSION_OR_KEY = ['/api/callbacks/', '/api/events/stream'];

function securityOf(method: string, url: string): Array<Record<string, string[]>> {
  if (PUBLIC.has(`${method} ${url}`)) return [];
  if (SESSION_OR_KEY.some((p) => url.startsWith(p))) return [{ bearer: [] }, { session: [] }];
  if (url.startsWith('/api/') && !url.startsWith('/api/user/pricing')) return [{ session: [] }];
  return [{ bearer: [] }];
}

const VERBS: Readonly<Record<string, string>> = { GET: 'get', POST: 'create', PUT: 'update', DELETE: 'delete', PATCH: 'update' };

/** `POST /v1/images/async/generations/:task_id` → `postV1ImagesAsyncGenerationsByTaskId`: unique per method and path. */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `by_${segment.slice(1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

/** A summary for routes that declare none: the verb and the resource, from the path. */
function summaryOf(method: string, url: string): string {
  const resource = url
    .split('/')
    .filter((s) => s && !s.startsWith(':') && !/^v\d+$/.test(s) && s !== 'api')
    .join(' ')
    .replace(/[-_]/g, ' ');
  const one = url.endsWith('}') || /\/:[^/]+$/.test(url);
  return `${VERBS[method] ?? method.toLowerCase()} ${resource}${one ? ' (one)' : ''}`.trim();
}

function errorResponses(shape: ErrorShape, secured: boolean, hasParams: boolean): Record<string, JsonSchema> {
  const body = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_BODIES[shape] } } });
  return {
    400: body('Refused: the message names the field at fault'),
    ...(secured ? { 401: body('No valid credentials'), 403: body('Not allowed for these credentials') } : {}),
    ...(hasParams ? { 404: body('No such resource for this caller') } : {}),
    429: body('Too many requests'),
    500: body('Server error'),
  };
}

/** The swagger `transform`: each route's own schema (zod → JSON schema), completed as above. */
export function documentRoutes(app: FastifyInstance) {
  return (input: Parameters<typeof jsonSchemaTransform>[0]): { schema: FastifySchema; url: string } => {
    const { schema, url } = jsonSchemaTransform(input);
    const route: RouteOptions = input.route;
    const method = (Array.isArray(route.method) ? route.method[0]! : route.method).toUpperCase();
    const declared = (schema ?? {}) as Record<string, unknown>;
    if (declared.hide) return { schema, url };
    const security = securityOf(method, route.url);
    const responses = (declared.response ?? {}) as Record<string, unknown>;
    const errors = errorResponses(shapeOfUrl(app, route.url), security.length > 0, route.url.includes(':'));
    return {
      url,
      schema: {
        ...declared,
        operationId: (declared.operationId as string | undefined) ?? operationIdOf(method, route.url),
        summary: (declared.summary as string | undefined) ?? summaryOf(method, route.url),
        security,
        response: {
          ...errors,
          ...responses,
          ...(Object.keys(responses).some((s) => s.startsWith('2')) ? {} : { 200: { description: 'Success', type: 'object' } }),
        },
      },
    };
  };
}
