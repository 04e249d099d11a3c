/**
 * Closes an HTTP server: answers in flight are finished, for at most `graceMs`, and nothing
 * else holds the close.
 *
 * Node's `server.close()` drops the connections idle at that moment, and fastify 5.12 does
 * nothing more by default (its `'idle'` setting only acts with a `serverFactory`: fastify
 * issue #7044). Three kinds of connection then held the close:
 * - a keep-alive connection whose request was still running becomes idle after the close began
 *   and is not looked at again: the close waited out the keep-alive timeout (72 s). Idle
 *   connections are swept until the close ends, so each goes once its last answer is sent.
 * - a connection that never sent a byte (a browser's preconnect; an HTTP client's pooled
 *   socket whose request was aborted while it connected) is not idle to Node — its headers
 *   timeout runs from the connection — and `close()` stops the checks that would end it. With
 *   nothing asked, nothing is lost by closing it: the sweep takes these too, once silent 1 s.
 * - a request still arriving, for the same reason, held the close for good: past the grace
 *   every connection left is cut.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

const SWEEP_EVERY_MS = 50;
/**
 * How long a connection must have been silent to be taken as one that will ask nothing: a
 * client sends its request within milliseconds of connecting, and one that connected just as
 * the close began is better answered (503, by fastify) than reset.
 */
const SILENT_FOR_MS = 1_000;

export type CloseServer = (graceMs: number) => Promise<void>;

/** Call as soon as the server is built: it must see every connection from the first. */
export function serverCloser(app: FastifyInstance): CloseServer {
  /** Open connections and when each was accepted. */
  const connections = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    connections.set(socket, Date.now());
    socket.once('close', () => connections.delete(socket));
  });

  function sweep(): void {
    app.server.closeIdleConnections();
    const silentSince = Date.now() - SILENT_FOR_MS;
    for (const [socket, acceptedAt] of connections) if (socket.bytesRead === 0 && acceptedAt <= silentSince) socket.destroy();
  }

  return async (graceMs) => {
    const sweeping = setInterval(sweep, SWEEP_EVERY_MS);
    const cut = setTimeout(() => {
      app.log.warn({ graceMs }, 'requests still in flight after the shutdown grace: their connections are cut');
      app.server.closeAllConnections();
    }, graceMs);
    try {
      await app.close();
    } finally {
      clearInterval(sweeping);
      clearTimeout(cut);
    }
  };
}
