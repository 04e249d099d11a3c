/**
 * Login throttling: every attempt costs a scrypt derivation (~65 ms of CPU) and is
 * unauthenticated, so attempts are counted per client address (before the body is read) and
 * per username (guessing one account's password from many addresses), each in a fixed
 * one-minute window, with @fastify/rate-limit's in-memory store. Over the limit: 429 with
 * `Retry-After`, in the session API's error shape, before any password work.
 *
 * The counts are per process: N API instances allow N times the limit.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { GatewayError } from '../errors.js';

const WINDOW_MS = 60_000;
/**
 * Keys remembered per limiter (LRU). Above the default 5000 so that cycling through made-up
 * usernames does not easily evict a targeted one; the per-address limit bounds that anyway.
 */
const TRACKED_KEYS = 20_000;

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export interface LoginThrottle {
  /** onRequest: one attempt from the client address (request.ip, see TRUST_PROXY). */
  byAddress: Hook;
  /** preHandler (after validation): one attempt at the username in the body. */
  byUsername: Hook;
}

const noLimit: Hook = async () => undefined;

/** Registers the rate-limit plugin on `app` (its encapsulation context) and builds the two hooks. */
export async function loginThrottle(app: FastifyInstance, config: Pick<Config, 'loginRateLimitPerIp' | 'loginRateLimitPerUser'>): Promise<LoginThrottle> {
  await app.register(rateLimit, { global: false });

  function limiter(max: number, what: string, keyOf: (request: FastifyRequest) => string | undefined): Hook {
    if (max === 0) return noLimit;
    // `cache` is honoured by the store (index.js passes the merged options to `child`) but is
    // missing from the CreateRateLimitOptions type, hence a variable rather than a literal.
    const options = { max, timeWindow: WINDOW_MS, cache: TRACKED_KEYS, keyGenerator: (request: FastifyRequest) => keyOf(request) ?? '' };
    const check = app.createRateLimit(options);
    return async (request, reply) => {
      if (keyOf(request) === undefined) return;
      const limit = await check(request);
      if (limit.isAllowed || !limit.isExceeded) return;
      const seconds = Math.max(1, limit.ttlInSeconds);
      reply.header('retry-after', String(seconds));
      throw new GatewayError(429, 'rate_limited', `too many login attempts ${what}: retry in ${seconds} s`);
    };
  }

  return {
    byAddress: limiter(config.loginRateLimitPerIp, 'from this address', (request) => `ip:${request.ip}`),
    byUsername: limiter(config.loginRateLimitPerUser, 'for this username', ({ body }) =>
      typeof body === 'object' && body !== null && 'username' in body && typeof body.username === 'string' ? `user:${body.username.toLowerCase()}` : undefined,
    ),
  };
}
