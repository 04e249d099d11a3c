/**
 * `GET /metrics` (Prometheus text format) behind `Authorization: Bearer <METRICS_TOKEN>`, and
 * the hook that counts every answered request by its route pattern (the built-in simulator's
 * apart, under gateway_simulator_http_*). Without METRICS_TOKEN the
 * gateway collects nothing and /metrics is an unknown route (404). Not in the OpenAPI document:
 * it is an operator's endpoint, like /healthz and /readyz.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from './deps.js';
import { GatewayError, renderError } from './errors.js';
import { isSimulatorRequest } from './limit-exempt.js';

/** Installs on the root instance (not a plugin): the hook must see the routes of every plugin. */
export function installMetrics(app: FastifyInstance, deps: Pick<GatewayDeps, 'config' | 'metrics'>): void {
  const { metrics } = deps;
  const token = deps.config.metricsToken;
  if (!metrics || !token) return;
  app.addHook('onResponse', async (request, reply) => {
    // The pattern (`/v1/videos/:task_id`), never the URL: ids and query strings would make a series per request.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    // The simulator's traffic (the gateway calling itself, or a test) apart from clients'.
    const simulator = isSimulatorRequest(request);
    (simulator ? metrics.simulatorHttpRequests : metrics.httpRequests).inc(labels);
    (simulator ? metrics.simulatorHttpDuration : metrics.httpDuration).observe(labels, reply.elapsedTime / 1000);
  });
  const expected = digest(`Bearer ${token}`);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const given = request.headers.authorization;
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      const reason = given === undefined ? 'a Bearer token (METRICS_TOKEN) is required' : 'the metrics token is not valid';
      const err = new GatewayError(401, 'unauthorized', `Authorization: ${reason}`, 'Authorization');
      // Answered here rather than thrown: the health server of the worker and projector roles has no error shapes.
      return reply.status(401).header('www-authenticate', 'Bearer realm="metrics"').send(renderError('plain', err));
    }
    return reply
      .header('content-type', metrics.registry.contentType)
      .header('cache-control', 'no-store')
      .send(await metrics.registry.metrics());
  });
}

/** Equal-length digests, so the comparison takes the same time whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
