/**
 * Load shedding: past a configured bound this instance refuses new requests at once, 429 with
 * `Retry-After`, rather than taking them on and slowing every request it already has.
 * - MAX_REQUESTS_IN_FLIGHT: requests received and not yet answered (an open event stream counts
 *   for as long as it is open);
 * - MAX_EVENT_LOOP_DELAY_MS, MAX_HEAP_USED_BYTES: @fastify/under-pressure's samples of the
 *   process (taken once a second).
 * All are off by default (0). The health checks and the metrics scrape are never shed
 * (limit-exempt.ts); the simulator, when mounted, is shed like any route. The refusal is thrown from an onRequest hook, so the error handler of
 * the route's family renders it in that family's shape, and nothing is appended or charged.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { GatewayError } from './errors.js';
import { exemptFromLimits } from './limit-exempt.js';

/** Overload passes in about a sampling period: clients are told to come back after it. */
const RETRY_AFTER_SECONDS = 1;

type Limits = Pick<Config, 'maxRequestsInFlight' | 'maxEventLoopDelayMs' | 'maxHeapUsedBytes'>;

function overloaded(what: string): GatewayError {
  return new GatewayError(429, 'overloaded', `server: ${what}; retry in ${RETRY_AFTER_SECONDS} s`, undefined, RETRY_AFTER_SECONDS);
}

/** What under-pressure reports, in the client's words. */
function pressureOf(type: string, value: number | undefined, limits: Limits): string {
  if (type === 'eventLoopDelay') return `overloaded (event loop delay ${Math.round(value ?? 0)} ms, at most ${limits.maxEventLoopDelayMs})`;
  if (type === 'heapUsedBytes') return `overloaded (heap ${value ?? 0} bytes in use, at most ${limits.maxHeapUsedBytes})`;
  return `overloaded (${type})`;
}

/** Adds the hooks to every route registered on `app` after it (root: before the route plugins). */
export async function shedLoad(app: FastifyInstance, limits: Limits): Promise<void> {
  // Registered only when watched: it samples the process on a timer and decorates the instance.
  if (limits.maxEventLoopDelayMs > 0 || limits.maxHeapUsedBytes > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      maxHeapUsedBytes: limits.maxHeapUsedBytes,
      // A rejected promise is passed on as the request's error; a resolved one lets it through.
      pressureHandler: (request, _reply, type, value) =>
        exemptFromLimits(request) ? Promise.resolve() : Promise.reject(overloaded(pressureOf(type, value, limits))),
    });
  }

  const max = limits.maxRequestsInFlight;
  if (max === 0) return;
  let inFlight = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (exemptFromLimits(request)) return;
    if (inFlight >= max) throw overloaded(`${max} requests in flight, the most this instance takes`);
    inFlight += 1;
    // `close` comes once the answer is sent or the connection is gone, whichever it was.
    reply.raw.once('close', () => {
      inFlight -= 1;
    });
  });
}
