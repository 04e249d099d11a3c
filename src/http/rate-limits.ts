/**
 * Requests per minute per API key: RATE_LIMIT_PER_MINUTE, or the token's own
 * `rate_limit_per_minute`. Counted by token id, not by address: one key used from many machines
 * is one client, and many keys behind one address are many. Every request that carries a known
 * key counts (generation, query, model and price listings, and the session routes that also take
 * a key); session requests carry none (login has its own throttle). It is checked when the
 * request arrives, before its body is read, so a refused request costs a cached token lookup.
 * Over the limit: 429 `rate_limited` with `Retry-After` (when the key's one-minute window ends),
 * in the error shape of the route's family; nothing is appended or charged.
 *
 * The built-in simulator, when mounted, is limited too: it takes any bearer, so its requests are
 * counted per client address at RATE_LIMIT_PER_MINUTE (the gateway's own calls to it included).
 *
 * The counts are @fastify/rate-limit's in-memory store, per process: N API instances allow up to
 * N times the limit (as the login throttle).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerKey } from './auth/bearer.js';
import { sha256 } from './auth/secrets.js';
import type { GatewayDeps } from './deps.js';
import { GatewayError } from './errors.js';
import { exemptFromLimits, isSimulatorRequest } from './limit-exempt.js';

const WINDOW_MS = 60_000;
/** Windows remembered (LRU): a key pushed out only starts a new window early. */
const TRACKED_TOKENS = 50_000;

type Check = ReturnType<FastifyInstance['createRateLimit']>;

/** Adds the check to every route registered on `app` after it (root: before the route plugins). */
export async function limitRequestsPerToken(app: FastifyInstance, deps: Pick<GatewayDeps, 'config' | 'tokens'>): Promise<void> {
  // What the store counts a request under, and against what: the hook knows the token first.
  const limitOf = new WeakMap<FastifyRequest, { tokenId: string; max: number }>();
  let check: Check | undefined;
  // A context of its own: the plugin's decorators stay out of the route plugins (the login
  // throttle registers its own instance, with its own store).
  await app.register(async (scope) => {
    await scope.register(rateLimit, { global: false });
    // `cache` is honoured by the store but missing from the options type (see login-throttle.ts).
    const options = {
      timeWindow: WINDOW_MS,
      cache: TRACKED_TOKENS,
      keyGenerator: (request: FastifyRequest) => limitOf.get(request)?.tokenId ?? '',
      max: (request: FastifyRequest) => limitOf.get(request)?.max ?? 0,
    };
    check = scope.createRateLimit(options);
  });
  const limited = check!;

  /** Whose window the request counts in, and its limit; undefined: not counted. */
  async function windowOf(request: FastifyRequest): Promise<{ tokenId: string; max: number } | undefined> {
    if (exemptFromLimits(request)) return undefined;
    // The simulator takes any bearer, so a bearer names no one: its callers are told apart by
    // address (TRUST_PROXY decides which), at the gateway's default limit.
    if (isSimulatorRequest(request)) {
      const max = deps.config.rateLimitPerMinute;
      return max === 0 ? undefined : { tokenId: `simulator ${request.ip}`, max };
    }
    const key = bearerKey(request);
    if (key === undefined) return undefined;
    // An unknown key is the route's to refuse (401), with the route's own message.
    const token = await deps.tokens.byKeyHash(sha256(key));
    if (!token) return undefined;
    // The key's limit: its own, else the gateway's; 0 = none.
    const max = token.rateLimitPerMinute ?? deps.config.rateLimitPerMinute;
    return max === 0 ? undefined : { tokenId: token.tokenId, max };
  }

  app.addHook('onRequest', async (request, reply) => {
    const window = await windowOf(request);
    if (!window) return;
    const { max } = window;
    limitOf.set(request, window);
    const limit = await limited(request);
    if (limit.isAllowed) return;
    const reset = Math.max(1, limit.ttlInSeconds);
    void reply.header('x-ratelimit-limit', String(max));
    void reply.header('x-ratelimit-remaining', String(limit.remaining));
    void reply.header('x-ratelimit-reset', String(reset));
    if (!limit.isExceeded) return;
    if (isSimulatorRequest(request))
      throw new GatewayError(429, 'rate_limited', `the simulator takes ${max} requests per minute from one address; retry in ${reset} s`, undefined, reset);
    throw new GatewayError(429, 'rate_limited', `Authorization: this API key may make ${max} requests per minute; retry in ${reset} s`, 'Authorization', reset);
  });
}
