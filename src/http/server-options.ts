/**
 * The HTTP server's connection bounds and proxy trust, from configuration.
 *
 * `requestTimeout` bounds receiving a request (headers and body) from its first byte: Node
 * stops timing a request once it is fully received, so a long synchronous generation call or
 * an SSE stream is not cut by it, while a body trickled byte by byte is. No idle-socket
 * timeout (`connectionTimeout`) is set: a synchronous call may send nothing for minutes.
 */
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';

/** Node's default header timeout; never above the request timeout (Node refuses that). */
const HEADERS_TIMEOUT_MS = 60_000;
/** Node checks request deadlines on an interval (30 s by default); a tenth of the bound keeps the overshoot small. */
const MAX_CHECK_INTERVAL_MS = 30_000;
const MIN_CHECK_INTERVAL_MS = 100;

/**
 * fastify 5 no longer honours a numeric `trustProxy` (it fails closed), so a hop count is
 * given as proxy-addr's trust function: the nearest `hops` addresses are proxies. Like `true`
 * it believes whoever connects, so it is only safe where nothing but the proxies can reach us.
 */
function trustProxyOf(setting: Config['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return typeof setting === 'boolean' ? setting : [...setting];
}

export function serverOptions(config: Config): Pick<FastifyServerOptions, 'trustProxy' | 'requestTimeout' | 'keepAliveTimeout'> & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  const requestTimeout = config.requestTimeoutMs;
  const checkEvery =
    requestTimeout === 0 ? MAX_CHECK_INTERVAL_MS : Math.min(MAX_CHECK_INTERVAL_MS, Math.max(MIN_CHECK_INTERVAL_MS, Math.ceil(requestTimeout / 10)));
  return {
    trustProxy: trustProxyOf(config.trustProxy),
    requestTimeout,
    // Above the idle timeouts of common load balancers (60 s), so they close first (fastify's default).
    keepAliveTimeout: 72_000,
    http: {
      requestTimeout,
      headersTimeout: requestTimeout === 0 ? HEADERS_TIMEOUT_MS : Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
      connectionsCheckingInterval: checkEvery,
    },
  };
}
