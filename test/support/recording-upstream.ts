/**
 * A recording pass-through in front of the built-in simulator, mounted on the gateway under test
 * (`extraRoutes`): a channel whose base URL is `/_rec` reaches the simulator through it, and
 * every JSON body the gateway sent upstream is kept, with its Idempotency-Key. Proves what the
 * upstream received, byte for byte, without replacing the simulator.
 */
import type { RoutePlugin } from '../../src/http/server.js';

export const RECORDING_BASE = '/_rec';

export interface RecordedUpstreamCall {
  method: string;
  path: string;
  body: unknown;
  /** The `Idempotency-Key` header sent (a submit's client reference). */
  idempotencyKey?: string | undefined;
}

export function recordingUpstream(): { plugin: RoutePlugin; calls: RecordedUpstreamCall[] } {
  const calls: RecordedUpstreamCall[] = [];
  const plugin: RoutePlugin = (deps) => async (app) => {
    app.route({
      method: ['GET', 'POST'],
      url: `${RECORDING_BASE}/*`,
      bodyLimit: 100 * 1024 * 1024,
      schema: { hide: true },
      handler: async (request, reply) => {
        const path = request.url.slice(RECORDING_BASE.length);
        const key = request.headers['idempotency-key'];
        calls.push({ method: request.method, path, body: request.body, idempotencyKey: Array.isArray(key) ? key[0] : key });
        const headers: Record<string, string> = { authorization: request.headers.authorization ?? '' };
        if (request.method === 'POST') headers['content-type'] = 'application/json';
        const res = await fetch(`${deps.selfUrl()}/_sim${path}`, {
          method: request.method,
          headers,
          ...(request.method === 'POST' ? { body: JSON.stringify(request.body) } : {}),
        });
        void reply.status(res.status).header('content-type', res.headers.get('content-type') ?? 'application/json');
        return Buffer.from(await res.arrayBuffer());
      },
    });
  };
  return { plugin, calls };
}
