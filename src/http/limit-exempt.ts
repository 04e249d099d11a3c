/**
 * Requests no rate limit or load shedding refuses: the health checks and the metrics scrape
 * (an orchestrator and Prometheus must see an overloaded instance as alive, and see why). The
 * built-in simulator is not among them: mounted, it is limited like any route
 * (docs/decisions/0140-simulator-off-by-default-and-limited.md).
 */
import type { FastifyRequest } from 'fastify';

const EXEMPT_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Where src/gateway.ts mounts the simulator (SIMULATOR_BASE_URL). */
const SIMULATOR_PREFIX = '/_sim';

export function exemptFromLimits(request: FastifyRequest): boolean {
  return EXEMPT_ROUTES.has(request.routeOptions.url ?? '');
}

/** A request to the built-in simulator's paths (counted apart in /metrics, limited per address). */
export function isSimulatorRequest(request: Pick<FastifyRequest, 'url'>): boolean {
  const { url } = request;
  return url.startsWith(SIMULATOR_PREFIX) && (url.length === SIMULATOR_PREFIX.length || '/?'.includes(url.charAt(SIMULATOR_PREFIX.length)));
}
