/**
 * Requests no rate limit or load shedding refuses: the health checks and the metrics scrape
 * (an orchestrator and Prometheus must see an overloaded instance as alive, and see why), and
 * the built-in simulator, which stands in for an upstream the gateway itself calls.
 */
import type { FastifyRequest } from 'fastify';

const EXEMPT_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Where src/gateway.ts mounts the simulator (SIMULATOR_BASE_URL). */
const SIMULATOR_PREFIX = '/_sim/';

export function exemptFromLimits(request: FastifyRequest): boolean {
  return EXEMPT_ROUTES.has(request.routeOptions.url ?? '') || request.url.startsWith(SIMULATOR_PREFIX);
}
