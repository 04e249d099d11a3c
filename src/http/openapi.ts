/**
 * What the OpenAPI document says beyond each route's own schema, derived in one place from the
 * route (method, path, config) so no route can be left out: an `operationId`, a summary, the
 * security it requires; its error answers as JSON (they are in its `schema.response`, added by
 * route-config.ts in its family's error shape), and its event stream (`config.eventStream`).
 */
import type { SwaggerTransformObject } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

type JsonSchema = Record<string, unknown>;

/** Routes that need no credentials. */
const PUBLIC = new Set(['POST /api/user/login', 'POST /api/user/logout']);
/** Session routes that also take an API key. */
const SESSION_OR_KEY = ['/api/callbacks/', '/api/events/stream'];

export function securityOf(method: string, url: string): Array<Record<string, string[]>> {
  if (PUBLIC.has(`${method} ${url}`)) return [];
  if (SESSION_OR_KEY.some((p) => url.startsWith(p))) return [{ bearer: [] }, { session: [] }];
  if (url.startsWith('/api/')) return [{ session: [] }];
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

/**
 * An answer in its own media type: errors are JSON whatever the route's success answer is (a
 * route's `produces`, such as the MP4 download's, names the latter only).
 */
const asJson = (schema: JsonSchema) => ({ description: schema.description ?? 'Error', content: { 'application/json': { schema } } });
/**
 * Server-sent events: before OpenAPI 3.2 (which adds `itemSchema`) a stream's `schema` describes
 * one event, as an SSE reader hands it over: its `data` lines joined, its `event` name
 * (`message` when none is sent), its `id` when it has one. Comments (heartbeats) are not events.
 */
const SSE_EVENT = {
  type: 'object',
  required: ['data', 'event'],
  properties: {
    data: { type: 'string', description: 'the event: JSON text' },
    event: { type: 'string', description: 'its name; `message` when none is sent' },
    id: { type: 'string', description: 'its position, for Last-Event-ID, where the stream has one' },
    retry: { type: 'integer' },
  },
  description: 'server-sent events, each as an SSE reader hands it over',
};
const EVENT_STREAM = { 'text/event-stream': { schema: SSE_EVENT } };
/** A CSV file: its first record names the columns (RFC 4180 with a header). */
const CSV = { 'text/csv': { schema: { type: 'string', description: 'CSV text (RFC 4180), a header record first' } } };

/** The responses of a route: its declared ones (error answers included, route-config.ts), completed. */
function responsesOf(
  declared: Record<string, JsonSchema>,
  eventStream: 'always' | 'when-asked' | undefined,
  csv: 'when-asked' | undefined,
): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(declared)) responses[status] = Number(status) >= 400 ? asJson(schema) : schema;
  const ok = declared['200'];
  if (eventStream === 'always') responses['200'] = { description: ok?.description ?? 'An event stream', content: EVENT_STREAM };
  else if (eventStream === 'when-asked' && ok)
    responses['200'] = { description: ok.description ?? 'Success', content: { 'application/json': { schema: ok }, ...EVENT_STREAM } };
  else if (csv === 'when-asked' && ok) responses['200'] = { description: ok.description ?? 'Success', content: { 'application/json': { schema: ok }, ...CSV } };
  else if (!Object.keys(declared).some((s) => s.startsWith('2'))) responses['200'] = { description: 'Success', type: 'object' };
  return responses;
}

/** The swagger `transform`: each route's own schema (zod → JSON schema), completed as above. */
export function documentRoutes() {
  return (input: Parameters<typeof jsonSchemaTransform>[0]): { schema: FastifySchema; url: string } => {
    const { schema, url } = jsonSchemaTransform(input);
    const route: RouteOptions = input.route;
    const method = (Array.isArray(route.method) ? route.method[0]! : route.method).toUpperCase();
    const declared = (schema ?? {}) as Record<string, unknown>;
    if (declared.hide) return { schema, url };
    const security = securityOf(method, route.url);
    return {
      url,
      schema: {
        ...declared,
        operationId: (declared.operationId as string | undefined) ?? operationIdOf(method, route.url),
        summary: (declared.summary as string | undefined) ?? summaryOf(method, route.url),
        security,
        response: responsesOf((declared.response ?? {}) as Record<string, JsonSchema>, route.config?.eventStream, route.config?.csv),
      },
    };
  };
}

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every schema object under `value`, depth first (a schema's keywords hold further schemas). */
function* schemasUnder(value: unknown): Generator<JsonSchema> {
  if (Array.isArray(value)) for (const item of value) yield* schemasUnder(item);
  else if (isObject(value)) {
    yield value;
    for (const child of Object.values(value)) yield* schemasUnder(child);
  }
}

/**
 * A nullable enum lists `null` among its values: OpenAPI 3.0.3 reads `nullable` as allowing null
 * only when the enum does too, and the gateway takes null where it says nullable (null counts as omitted).
 */
function listNullInNullableEnums(document: unknown): void {
  for (const schema of schemasUnder(document)) {
    if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...(schema.enum as unknown[]), null];
  }
}

/** The fields of a body (through its unions), by name: a form's parts. */
function* fieldsOf(schema: JsonSchema): Generator<[string, JsonSchema]> {
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const branch of branches) if (isObject(branch)) yield* fieldsOf(branch);
  }
  if (isObject(schema.properties)) for (const [name, field] of Object.entries(schema.properties)) if (isObject(field)) yield [name, field];
}

const branchesOf = (field: JsonSchema): JsonSchema[] => {
  const branches = field.anyOf ?? field.oneOf;
  return Array.isArray(branches) ? branches.filter(isObject) : [field];
};
/** An object, or an array of objects or arrays: JSON in a form. An array of text is one part per item. */
const structured = (schema: JsonSchema): boolean =>
  schema.type === 'object' || (schema.type === 'array' && isObject(schema.items) && branchesOf(schema.items).every(structured));

/**
 * A field as a form part. One that holds only objects (or arrays of them) is one part declared
 * `application/json` (returns true: its `encoding`); an array of text is a part per item. One
 * that is text or an object (the openai client's `{image_url}`, which a form sends as bracketed
 * keys) is text here: a part is not an object.
 */
function asPart(field: JsonSchema): boolean {
  const branches = branchesOf(field);
  if (branches.length > 0 && branches.every(structured)) return true;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(field[key])) field[key] = branchesOf(field).filter((branch) => branch.type !== 'object');
  }
  return false;
}

const onlyNull = (schema: unknown) => isObject(schema) && Array.isArray(schema.enum) && schema.enum.every((value) => value === null);

/** A field as a form part: the same, less null (through its own unions); one that takes only null takes nothing. */
function withoutNull(field: JsonSchema): void {
  delete field.nullable;
  if (onlyNull(field)) {
    for (const key of Object.keys(field)) if (key !== 'description') delete field[key];
    field.not = {};
    return;
  }
  if (Array.isArray(field.enum)) field.enum = field.enum.filter((value) => value !== null);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = field[key];
    if (!Array.isArray(branches)) continue;
    field[key] = branches.filter((branch) => !onlyNull(branch));
    for (const branch of field[key] as unknown[]) if (isObject(branch)) withoutNull(branch);
  }
}

/**
 * A form has no null: a part is text, or absent. Its fields are what the JSON body's are, less
 * null (a field the JSON body takes only as null is absent from a form); a field that holds an
 * object or an array is one part declared `application/json` (its `encoding`), which the form
 * readers take as that JSON value.
 */
function formOf(media: JsonSchema & { schema: JsonSchema }): JsonSchema {
  const schema = structuredClone(media.schema);
  const encoding: Record<string, { contentType: string }> = {};
  for (const [name, field] of fieldsOf(schema)) {
    withoutNull(field);
    if (asPart(field)) encoding[name] = { contentType: 'application/json' };
  }
  return { ...media, schema, ...(Object.keys(encoding).length ? { encoding } : {}) };
}

/** The swagger `transformObject`: what holds across the whole document (see each step). */
export const finishDocument: SwaggerTransformObject = (documentObject) => {
  if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
  const document = documentObject.openapiObject;
  listNullInNullableEnums(document);
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(isObject(operations) ? operations : {})) {
      const content = isObject(operation) && isObject(operation.requestBody) ? operation.requestBody.content : undefined;
      const form = isObject(content) ? content['multipart/form-data'] : undefined;
      // A new media object: the swagger plugin shares one between the media types a route consumes.
      if (isObject(content) && isObject(form) && isObject(form.schema)) content['multipart/form-data'] = formOf({ ...form, schema: form.schema });
    }
  }
  return document;
};
