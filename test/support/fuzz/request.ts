/**
 * One generated request per draw: a route, its path parameters and query, credentials, extra
 * headers and a body of one of the generated kinds. Descriptions stay small (bodies are
 * expanded only when sent) so a failing one can be printed and replayed with its seed.
 */
import fc from 'fast-check';
import { deeplyNested, malformedJson, nearValid, serialize, type Json } from './json.js';
import { buildForm, formSpec, type FormSpec } from './multipart.js';
import { authKind, extraHeaders, garbageAuthorization, garbageCookie, pathParam, queryString, urlComponent, type AuthKind } from './headers.js';
import type { Route } from './routes.js';

export type BodySpec =
  | { kind: 'json' | 'near-valid' | 'deep'; value: Json; contentType: string }
  | { kind: 'malformed' | 'wrong-type'; text: string; contentType: string | null }
  | { kind: 'form'; form: FormSpec };

export interface FuzzRequest {
  /** The route as listed: `POST /v1/videos`. */
  route: string;
  method: string;
  /** Path with parameters filled and encoded, and the query string. */
  url: string;
  auth: AuthKind;
  authorization: string;
  cookie: string;
  headers: Record<string, string>;
  body?: BodySpec;
}

/** What a route's requests are made from. */
export interface RouteInputs {
  route: Route;
  /** A body the route accepts (with the right credentials), mutated by near-valid bodies. */
  template?: Json;
  /** The file field when the route takes multipart forms. */
  fileField?: string;
  /** Real values per path parameter (ids of tasks of another account, a channel, an asset). */
  pools: Record<string, readonly string[]>;
}

const JSON_TYPES = ['application/json', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1'];
const WRONG_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json;;',
  'application/jsonx',
  'application/vnd.api+json',
  'text/json',
  '*/*',
  'multipart/mixed',
  'multipart/form-data',
  'image/png',
  'garbage',
  ';',
  'application/json, text/plain',
];

function bodies(inputs: RouteInputs): fc.Arbitrary<BodySpec | undefined> {
  const { template, fileField } = inputs;
  const json = (kind: 'json' | 'near-valid' | 'deep', value: fc.Arbitrary<Json>) =>
    fc.tuple(value, fc.constantFrom(...JSON_TYPES)).map(([v, contentType]): BodySpec => ({ kind, value: v, contentType }));
  const options: Array<{ weight: number; arbitrary: fc.Arbitrary<BodySpec | undefined> }> = [
    { weight: 2, arbitrary: json('json', fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>) },
    { weight: 1, arbitrary: json('deep', deeplyNested(template)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(malformedJson(template), fc.constantFrom(...JSON_TYPES))
        .map(([text, contentType]): BodySpec => ({ kind: 'malformed', text, contentType })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<string | null>(null, ...WRONG_TYPES)
        .map((contentType): BodySpec => ({ kind: 'wrong-type', text: serialize(template ?? {}), contentType })),
    },
    { weight: fileField ? 6 : 1, arbitrary: formSpec(template, fileField ?? 'image').map((form): BodySpec => ({ kind: 'form', form })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  ];
  if (template !== undefined) options.push({ weight: 6, arbitrary: json('near-valid', nearValid(template)) });
  return fc.oneof(...options);
}

/** Fills `{name}` parameters; an asset pool entry is a whole `key?exp=&sig=` tail, sent as is. */
function urls(inputs: RouteInputs): fc.Arbitrary<string> {
  const { route, pools } = inputs;
  const params = route.params.map((name) => {
    const pool = pools[name] ?? [];
    return name === '*' ? fc.oneof(fc.constantFrom(...(pool.length ? pool : ['x'])), pathParam([]).map(urlComponent)) : pathParam(pool).map(urlComponent);
  });
  return fc.tuple(fc.tuple(...params), queryString).map(([values, query]) => {
    let i = 0;
    const path = route.path.replace(/\{[^}]+\}/g, () => values[i++] ?? '');
    if (!query) return path;
    return `${path}${path.includes('?') ? '&' : '?'}${query}`;
  });
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

export function requestsFor(inputs: RouteInputs): fc.Arbitrary<FuzzRequest> {
  const { route } = inputs;
  // Reads charge nothing, so they often carry the funded key (a completed video's content);
  // forms are parsed only after the key is checked, so they mostly carry a valid one.
  const auth =
    route.method === 'GET'
      ? fc.oneof(authKind, fc.constant<AuthKind>('rich'))
      : inputs.fileField
        ? fc.oneof({ weight: 1, arbitrary: authKind }, { weight: 2, arbitrary: fc.constantFrom<AuthKind>('bearer', 'rich') })
        : authKind;
  const method = fc.oneof({ weight: 19, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) });
  return fc
    .record({ method, url: urls(inputs), auth, authorization: garbageAuthorization, cookie: garbageCookie, headers: extraHeaders, body: bodies(inputs) })
    .map((r) => ({ ...r, route: `${route.method} ${route.path}`, body: r.method === 'GET' ? undefined : r.body }));
}

export interface Credentials {
  brokeKey: string;
  richKey: string;
  brokeCookie: string;
  adminCookie: string;
}

/** The request as fetch sends it; `id` becomes its x-request-id (appends are attributed by it). */
export function materialize(request: FuzzRequest, creds: Credentials, id: string): { url: string; init: RequestInit } {
  const headers: Record<string, string> = { ...request.headers, 'x-request-id': id };
  // Logging out would end the sessions the rest of the run uses.
  const auth = request.route === 'POST /api/user/logout' && ['session', 'both', 'admin'].includes(request.auth) ? 'garbage' : request.auth;
  if (auth === 'garbage') {
    headers.authorization = request.authorization;
    headers.cookie = request.cookie;
  }
  if (auth === 'bearer' || auth === 'both') headers.authorization = `Bearer ${creds.brokeKey}`;
  if (auth === 'rich') headers.authorization = `Bearer ${creds.richKey}`;
  if (auth === 'session' || auth === 'both') headers.cookie = creds.brokeCookie;
  if (auth === 'admin') headers.cookie = creds.adminCookie;
  let body: Buffer | undefined;
  const spec = request.body;
  if (spec?.kind === 'json' || spec?.kind === 'near-valid' || spec?.kind === 'deep') {
    headers['content-type'] = spec.contentType;
    body = Buffer.from(serialize(spec.value));
  } else if (spec?.kind === 'malformed' || spec?.kind === 'wrong-type') {
    if (spec.contentType !== null) headers['content-type'] = spec.contentType;
    body = Buffer.from(spec.text);
  } else if (spec?.kind === 'form') {
    const form = buildForm(spec.form);
    headers['content-type'] = form.contentType;
    body = form.payload;
  }
  return { url: request.url, init: { method: request.method, headers, body, redirect: 'manual' } };
}

/** A short, replayable description of a request for failure messages. */
export function describe(request: FuzzRequest): string {
  const text = JSON.stringify(request, (_k, v: unknown) => (typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…(${v.length} chars)` : v));
  return text.length > 3000 ? `${text.slice(0, 3000)}…` : text;
}
