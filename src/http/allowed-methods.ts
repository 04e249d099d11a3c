/**
 * 405 Method Not Allowed: a request whose path some route declares, with a method no route of
 * that path declares (`QUERY /api/token/1`, `TRACE /api/pricing`), is answered 405 with an
 * `Allow` header listing the methods the path does take (RFC 9110 §15.5.6), in the error shape
 * of the family whose path it is (errors.ts `shapeOfUrl`), rather than the not-found 404. A path
 * no route declares stays 404. (A route matched with an empty parameter, `DELETE /api/token/`,
 * counts as no route of that path: see `names`.)
 *
 * fastify's router (find-my-way) matches one method at a time and tells nobody which other
 * methods a path has, so a second find-my-way router holds every declared route (onRoute). It is
 * asked only for requests fastify routed to the not-found handler (or to a route with an empty
 * parameter), in an `onRequest` hook: that
 * runs before any body is read or its content type checked (fastify refuses a body-carrying
 * method such as QUERY without a `Content-Type` before its handler), before authentication
 * and the rate limits.
 */
import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { GatewayError, sendError, shapeOfUrl } from './errors.js';

/**
 * A match that names a resource: every named path parameter non-empty. The router also matches
 * `/api/token/` to `DELETE /api/token/:id` with an empty id, which names no token: DELETE is no
 * method of the collection `/api/token/`, and is answered 405 there like any other.
 */
const emptyParam = (params: unknown): boolean =>
  typeof params === 'object' && params !== null && Object.entries(params).some(([name, value]) => name !== '*' && value === '');
const names = (match: { params: Record<string, string | undefined> } | null): boolean => match !== null && !emptyParam(match.params);

export function answerUndeclaredMethods(app: FastifyInstance): void {
  // fastify's router defaults (case-sensitive, trailing slash significant, 100-character parameters).
  const declared = FindMyWay({ maxParamLength: 100 });
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat().map((m) => m.toUpperCase() as HTTPMethod)) {
      methods.add(method);
      // Two routes on one method and path (fastify's automatic HEAD beside an explicit one) are one here.
      if (!declared.hasRoute(method, route.url)) declared.on(method, route.url, () => undefined);
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    // A request routed to a route of its path: its own, unless an empty parameter names nothing.
    if (!request.is404 && !emptyParam(request.params)) return;
    const allowed = [...methods].filter((method) => method !== request.method && names(declared.find(method, request.url))).sort();
    if (allowed.length === 0) return;
    const path = request.url.split('?')[0];
    const error = new GatewayError(
      405,
      'method_not_allowed',
      `method: ${request.method} is not allowed on ${path} (it allows ${allowed.join(', ')})`,
      'method',
    );
    return sendError(reply.header('allow', allowed.join(', ')), shapeOfUrl(app, request.url), error);
  });
}
