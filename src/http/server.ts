/**
 * Assembles the HTTP server: ecosystem plugins (OpenAPI, cookies), then one encapsulated
 * plugin per route group, each with its own error shape. `listen` is the caller's business.
 */
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { responseSerializer } from './response-serializer.js';
import { randomUUID } from 'node:crypto';
import { channelRoutes } from './api/channels.js';
import { billingRoutes } from './api/billing.js';
import { usageRoutes } from './api/usage.js';
import { webhookRoutes } from './api/webhooks.js';
import { eventStreamRoutes } from './api/events-stream.js';
import { creditRoutes } from './api/credits.js';
import { metricsRoutes } from './api/metrics.js';
import { pricingRoutes } from './api/pricing.js';
import { tokenRoutes } from './api/tokens.js';
import { userRoutes } from './api/users.js';
import { userAdminRoutes } from './api/user-admin.js';
import type { GatewayDeps } from './deps.js';
import { GatewayError, renderError, sendError, shapeOfUrl } from './errors.js';
import { applyRouteConfig } from './route-config.js';
import { answerUndeclaredMethods } from './allowed-methods.js';
import { limitJsonDepth } from './json-depth.js';
import { clientErrorHandler } from './client-errors.js';
import { healthRoutes } from './health.js';
import { modelRoutes } from './models.js';
import { keyPriceListRoutes, userPriceListRoutes } from './api/price-list.js';
import { serverOptions } from './server-options.js';
import { documentRoutes, finishDocument } from './openapi.js';
import { shedLoad } from './load-shedding.js';
import { limitRequestsPerToken } from './rate-limits.js';
import { installMetrics } from './metrics-route.js';
import { installRequestLog, quietRequests } from './request-log.js';
import { taskListRoutes } from './api/tasks.js';
import { consoleRoutes } from './console.js';

/** The server of the `worker` and `projector` roles: health and readiness only. */
export async function buildHealthServer(deps: GatewayDeps, options: ServerLogOptions = {}): Promise<FastifyInstance> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it is needed: it picks fastify's logger type for the instance (pino's Logger makes another FastifyInstance)
  const app = Fastify({ loggerInstance: deps.log as FastifyBaseLogger, logController: quietRequests() });
  installRequestLog(app, deps.log, options.requestSummaryMs);
  installMetrics(app, deps);
  await app.register(healthRoutes(deps));
  return app;
}

/** Route plugins contributed by the generation families and other modules. */
export type RoutePlugin = (deps: GatewayDeps) => FastifyPluginAsync;

export interface ServerLogOptions {
  /** Interval of the request summary's `info` line (request-log.ts); a minute unless a test says otherwise. */
  requestSummaryMs?: number;
}

export async function buildServer(deps: GatewayDeps, extraRoutes: readonly RoutePlugin[] = [], options: ServerLogOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- as above: the instance's logger type
    loggerInstance: deps.log as FastifyBaseLogger,
    // Requests are logged at debug, and summed up once a minute at info (request-log.ts).
    logController: quietRequests(),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 40 * 1024 * 1024,
    // A malformed path (bad percent-encoding, an overlong segment) never reaches a route: answer it
    // in the shape of the family whose paths it is under, like the not-found handler.
    // (Hooks do not run for these, so the request id is set here.)
    frameworkErrors: (error, request, reply) => void sendError(reply.header('x-request-id', request.id), shapeOfUrl(request.server, request.url), error),
    // What Node's HTTP parser refuses (oversized headers, a timed-out request) in the plain shape.
    clientErrorHandler,
    // Proxy trust and request-receiving timeouts (TRUST_PROXY, REQUEST_TIMEOUT_MS).
    ...serverOptions(deps.config),
  });
  // Every answer names its request, so a client (or a test) can find what it caused.
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializer(app.log, deps.config.responseSchemas));
  // Each route's `config`: its authentication and its error shape (route-config.ts).
  applyRouteConfig(app, deps);
  // A declared path asked with a method none of its routes take: 405 with Allow (allowed-methods.ts).
  answerUndeclaredMethods(app);
  // JSON nested absurdly deep is refused before it is parsed: later code walks bodies recursively.
  limitJsonDepth(app);
  installRequestLog(app, deps.log, options.requestSummaryMs);
  // Prometheus: every answer counted by route pattern, and GET /metrics (with METRICS_TOKEN).
  installMetrics(app, deps);
  // 429s before any route runs: load shed past the configured bounds, then each API key's requests per minute.
  await shedLoad(app, deps.config);
  await limitRequestsPerToken(app, deps);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Media Generation Gateway',
        version: '0.1.0',
        description: 'Image, video and music generation behind one API.',
        license: { name: 'Proprietary' },
      },
      // Where clients reach this instance: its public base when one is configured, else relative to the document.
      servers: [{ url: deps.config.publicBaseUrl ?? '/', description: 'this gateway' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, session: { type: 'apiKey', in: 'cookie', name: 'gw_session' } } },
    },
    // Each route's own schema plus operationId, summary, security and error answers (openapi.ts).
    transform: documentRoutes(),
    // What holds across the document: null in nullable enums, forms without null (openapi.ts).
    transformObject: finishDocument,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(cookie);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(healthRoutes(deps));

  // The user, token and admin routes: their errors are `{success, message}` (`config: API_ROUTE`).
  await app.register(userRoutes(deps));
  await app.register(userAdminRoutes(deps));
  await app.register(tokenRoutes(deps));
  await app.register(channelRoutes(deps));
  await app.register(pricingRoutes(deps));
  await app.register(creditRoutes(deps));
  await app.register(metricsRoutes(deps));
  await app.register(billingRoutes(deps));
  await app.register(usageRoutes(deps));
  await app.register(webhookRoutes(deps));
  await app.register(eventStreamRoutes(deps));
  await app.register(userPriceListRoutes(deps));
  await app.register(taskListRoutes(deps));
  await app.register(modelRoutes(deps));
  await app.register(keyPriceListRoutes(deps));
  // The web console's files (console/dist); the console itself only calls the APIs above.
  await app.register(consoleRoutes());
  for (const plugin of extraRoutes) await app.register(plugin(deps));

  // Errors outside every family plugin (root routes, a body refused on the way to the not-found
  // handler) take the shape of the paths they are under, as unrouted requests do.
  app.setErrorHandler((error, request, reply) => sendError(reply, shapeOfUrl(app, request.url), error));
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(renderError(shapeOfUrl(app, request.url), new GatewayError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`))),
  );
  return app;
}
