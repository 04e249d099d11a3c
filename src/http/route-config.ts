/**
 * What every route declares beside its schema, in its `config`, applied by one `onRoute` hook
 * (the way @fastify/rate-limit applies `config.rateLimit`):
 * - `auth: 'bearer'`: the request's API key is authenticated (auth/bearer.ts) once, before the
 *   route's own `preValidation` hooks and its schema validation, so an unauthenticated request is
 *   401 whatever its body and a form is read only once its key is accepted. `preValidation`:
 *   after the body is parsed (a malformed body stays that body's 4xx). The handler reads
 *   `request.caller`.
 * - `errorShape`: the error body of the route's family (errors.ts), also for requests under its
 *   path that reach no route; and the route's error answers, added to its `schema.response` in
 *   that shape (error-bodies.ts: the statuses of its kind, plus `errorStatuses`), unless the
 *   route declares the status itself.
 * - `errorStatuses`: error statuses the route answers beyond those of its kind.
 * - `eventStream`: the route's 200 is `text/event-stream` (`always`), or is when the request asks
 *   for a stream and JSON otherwise (`when-asked`): for the OpenAPI document (openapi.ts).
 * - `csv: 'when-asked'`: the route's 200 is `text/csv` when the request asks for it (a `format`
 *   parameter), JSON otherwise: for the OpenAPI document too.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { authenticate } from './auth/bearer.js';
import type { GatewayDeps } from './deps.js';
import { errorAnswers, errorStatusesOf } from './error-bodies.js';
import { recordRouteShape, sendError, type ErrorShape } from './errors.js';
import { securityOf } from './openapi.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: 'bearer';
    errorShape?: ErrorShape;
    errorStatuses?: readonly number[];
    eventStream?: 'always' | 'when-asked';
    csv?: 'when-asked';
  }
}

export type RouteConfig = Pick<FastifyContextConfig, 'auth' | 'errorShape' | 'errorStatuses' | 'eventStream' | 'csv'>;

type Hooks<H> = H | H[] | undefined;
const listOf = <H>(hooks: Hooks<H>): H[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

export function applyRouteConfig(app: FastifyInstance, deps: Pick<GatewayDeps, 'tokens' | 'clock'>): void {
  const authenticated: preValidationAsyncHookHandler = async (request: FastifyRequest) => {
    await authenticate(request, deps.tokens, deps.clock());
  };
  app.addHook('onRoute', (route) => {
    const { auth, errorShape, errorStatuses } = route.config ?? {};
    if (errorShape) {
      route.errorHandler = (error, _request, reply) => void sendError(reply, errorShape, error);
      recordRouteShape(app.server, route.url, errorShape);
      const method = [route.method].flat()[0]!.toUpperCase();
      const statuses = errorStatusesOf({
        method,
        url: route.url,
        credentials: securityOf(method, route.url).length > 0,
        bearer: auth === 'bearer',
        also: errorStatuses,
      });
      // New objects: a schema may be shared by several routes.
      route.schema = { ...route.schema, response: { ...errorAnswers(errorShape, statuses), ...(route.schema?.response as object | undefined) } };
    }
    if (auth === 'bearer') route.preValidation = [authenticated, ...listOf(route.preValidation)];
  });
}
