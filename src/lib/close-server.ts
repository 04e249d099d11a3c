/**
 * Closes an HTTP server: answers in flight are finished, for at most `graceMs`, and nothing
 * else holds the close.
 *
 * Node's `server.close()` drops the connections idle at that moment, and fastify 5.12 does
 * nothing more by default (its `'idle'` setting only acts with a `serverFactory`: fastify
 * issue #7044). Two kinds of connection then held the close:
 * - a keep-alive connection whose request was still running becomes idle after the close began
 *   and is not looked at again: the close waited out the keep-alive timeout (72 s) behind a
 *   client's pooled connection or the gateway's own call to its built-in simulator. Sweeping
 *   idle connections until the close ends lets each go once its last answer is sent.
 * - a request still arriving: `close()` also stops the checks that enforce the request
 *   timeout, so a client that stops sending half-way (seen from a closing browser) held it for
 *   good. Past the grace every connection left is cut.
 */
import type { FastifyInstance } from 'fastify';

const SWEEP_EVERY_MS = 50;

export async function closeServer(app: FastifyInstance, graceMs: number): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), SWEEP_EVERY_MS);
  const cut = setTimeout(() => {
    app.log.warn({ graceMs }, 'requests still in flight after the shutdown grace: their connections are cut');
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
