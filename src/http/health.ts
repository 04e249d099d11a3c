import type { FastifyPluginAsync } from 'fastify';
import type { GatewayDeps } from './deps.js';
import { statusOf } from '../lib/background.js';

/**
 * `/healthz`: the process is up. `/readyz`: every adapter answers (else 503), and each
 * background process of this role with its last successful pass (null: none yet).
 */
export function healthRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const adapters = { events: deps.events, views: deps.views, bus: deps.bus, assets: deps.assets };
      const checks: Record<string, string> = {};
      await Promise.all(
        Object.entries(adapters).map(async ([name, adapter]) => {
          try {
            await withinPingTimeout(adapter.ping());
            checks[name] = 'ok';
          } catch (err) {
            checks[name] = err instanceof Error ? err.message : 'unavailable';
          }
        }),
      );
      const ready = Object.values(checks).every((c) => c === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks, processes: statusOf(deps.backgroundProcesses()) });
    });
  };
}

/** An adapter that does not answer within this is reported unavailable: /readyz itself never hangs. */
const PING_TIMEOUT_MS = 2000;

function withinPingTimeout(ping: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
  });
  return Promise.race([ping, timeout]).finally(() => clearTimeout(timer));
}
