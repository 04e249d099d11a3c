/**
 * The routes a generated-input run covers: every path and method of the OpenAPI document the
 * gateway serves, plus routes fastify registered that the document leaves out (hidden ones),
 * found by reading `app.printRoutes()`. And the error shape each path answers in (spec 7).
 */
import type { FastifyInstance } from 'fastify';

export type Shape = 'plain' | 'submit' | 'openai' | 'api' | 'art';

export interface Route {
  method: string;
  /** OpenAPI form: `/v1/videos/{task_id}`. */
  path: string;
  /** Path parameter names, in order. */
  params: string[];
  /** From the OpenAPI document, or registered but left out of it. */
  documented: boolean;
}

/**
 * Registered but deliberately outside the document and this run (tooling, the test upstream): the
 * simulator, and the static files of the OpenAPI browser and of the web console (tested in test/console).
 */
const INFRASTRUCTURE = [/^\/_sim(\/|$)/, /^\/docs(\/|$)/, /^\/console(\/|$)/];

const paramsOf = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

export function routesOfOpenApi(doc: { paths: Record<string, Record<string, unknown>> }): Route[] {
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const method of Object.keys(operations)) {
      if (['get', 'post', 'put', 'delete', 'patch'].includes(method))
        routes.push({ method: method.toUpperCase(), path, params: paramsOf(path), documented: true });
    }
  }
  return routes;
}

/**
 * Every route fastify registered, as `METHOD /path/{param}`, from the radix tree
 * `printRoutes({method})` draws per method: each line is a segment relative to its parent,
 * with the method in parentheses where a route ends.
 */
export function registeredRoutes(app: FastifyInstance): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = [];
  for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
    const stack: string[] = [];
    for (const line of app.printRoutes({ method }).split('\n')) {
      const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)( \([A-Z, ]+\))?$/.exec(line);
      if (!match) continue;
      stack.length = match[1]!.length / 4;
      stack.push(match[2]!);
      // A parameter with its pattern (`:id(^usr_…$)`) is `{id}` in the document.
      if (match[3]) out.push({ method, path: stack.join('').replace(/:(\w+)(\([^)]*\))?/g, '{$1}') });
    }
  }
  return out;
}

/** The OpenAPI routes plus the registered ones it does not list (infrastructure aside). */
export function routesToFuzz(doc: { paths: Record<string, Record<string, unknown>> }, app: FastifyInstance): { routes: Route[]; undocumented: string[] } {
  const routes = routesOfOpenApi(doc);
  const known = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const undocumented: string[] = [];
  for (const r of registeredRoutes(app)) {
    if (known.has(`${r.method} ${r.path}`) || INFRASTRUCTURE.some((re) => re.test(r.path))) continue;
    known.add(`${r.method} ${r.path}`);
    undocumented.push(`${r.method} ${r.path}`);
    const path = r.path.replace(/\*$/, '{*}');
    routes.push({ method: r.method, path, params: paramsOf(path), documented: false });
  }
  return { routes, undocumented };
}

/** The error body family of a path (src/http/errors.ts; spec 7). */
export function shapeOf(path: string): Shape {
  if (path.startsWith('/api/')) return 'api';
  if (path.startsWith('/art/')) return 'art';
  if (/^\/(v1\/videos(\/|$)|v1\/video\/|clip\/)/.test(path)) return 'openai';
  // Async image and tune submits: every refusal is code invalid_request (spec 7).
  if (/^\/(v1\/images\/async\/generations|tune\/submit\/(MUSIC|LYRICS))$/.test(path)) return 'submit';
  return 'plain';
}

/** `{message, type, param, code}`, all strings: the openai error object. */
function isOpenaiError(e: unknown): e is Record<string, string> {
  return typeof e === 'object' && e !== null && ['message', 'type', 'param', 'code'].every((k) => typeof (e as Record<string, unknown>)[k] === 'string');
}

/** Whether `body` is an error body of `shape`. */
export function hasShape(shape: Shape, body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  // `{code, message}` bodies carry the openai `error` object too, with the same message.
  const plain = typeof b.code === 'string' && typeof b.message === 'string' && isOpenaiError(b.error) && b.error.message === b.message;
  switch (shape) {
    case 'plain':
      return plain;
    case 'submit':
      return plain && typeof b.reason === 'string' && b.code === 'invalid_request';
    case 'api':
      return b.success === false && typeof b.message === 'string';
    case 'art':
      return typeof b.code === 'number' && typeof b.description === 'string' && b.result === null;
    case 'openai':
      return isOpenaiError(b.error);
  }
}

/** The human text of an error body of any shape. */
export function messageOf(body: unknown): string {
  const b = (body ?? {}) as Record<string, unknown>;
  const e = b.error as Record<string, unknown> | undefined;
  return String(e?.message ?? b.message ?? b.description ?? '');
}
