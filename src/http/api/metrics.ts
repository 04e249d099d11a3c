/** `GET /api/admin/metrics` (admin): figures the benchmark and operators read from a running gateway. */
import type { FastifyPluginAsync } from 'fastify';
import { requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { API_ROUTE, ok } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function metricsRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/admin/metrics', { config: API_ROUTE, schema: { tags: ['admin'] }, preHandler: requireSession(deps, 'admin') }, async () => {
      const lags = [...deps.runner.finalEventLags()].sort((a, b) => a - b);
      const memory = process.memoryUsage();
      return ok({
        projection_position: deps.runner.position().toString(),
        event_store_head: (await deps.events.headPosition()).toString(),
        final_event_lag_ms: { count: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) ?? null },
        tasks_in_flight: {
          submitted: await deps.views.count(VIEWS.inflight, { stage: 'submitted' }),
          dispatched: await deps.views.count(VIEWS.inflight, { stage: 'dispatched' }),
        },
        memory: { rss: memory.rss, heap_used: memory.heapUsed },
      });
    });
  };
}
