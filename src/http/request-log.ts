/**
 * What the log says about requests: one `debug` line per answered request (fastify's own
 * per-request `info` lines are off), and one `info` line per minute that sums them up: how many,
 * by status class, the median and 99th percentile of their time. The built-in simulator's
 * requests (the gateway calling itself) are counted apart, as in /metrics. A minute without
 * requests still gets its line (`requests: 0`): the log shows the instance is there.
 */
import { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { isSimulatorRequest } from './limit-exempt.js';

export const REQUEST_SUMMARY_INTERVAL_MS = 60_000;
/** Durations kept per interval for the percentiles: a uniform sample beyond this (reservoir). */
const SAMPLE_SIZE = 4096;

interface Window {
  requests: number;
  byStatus: Record<string, number>;
  simulator: number;
  durationsMs: number[];
}

const emptyWindow = (): Window => ({ requests: 0, byStatus: {}, simulator: 0, durationsMs: [] });

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[at]! * 10) / 10;
}

/** The summary line's fields for one interval. */
export function summarize(window: Window, intervalMs: number) {
  const sorted = [...window.durationsMs].sort((a, b) => a - b);
  return {
    intervalSeconds: intervalMs / 1000,
    requests: window.requests,
    byStatus: window.byStatus,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    simulatorRequests: window.simulator,
  };
}

/** fastify's own per-request `info` lines off: installRequestLog writes them at debug. */
export const quietRequests = (): LogController => new LogController({ disableRequestLogging: true });

/** Installs on the root instance (hooks see every plugin's routes); the timer runs from ready to close. */
export function installRequestLog(app: FastifyInstance, log: Logger, intervalMs = REQUEST_SUMMARY_INTERVAL_MS): void {
  let window = emptyWindow();
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const responseTimeMs = Math.round(reply.elapsedTime * 10) / 10;
    // The path without its query: signed asset URLs carry their signature there.
    log.debug(
      { reqId: request.id, method: request.method, url: request.url.split('?')[0], route: request.routeOptions.url, status, responseTimeMs },
      'request completed',
    );
    if (isSimulatorRequest(request)) {
      window.simulator += 1;
      return;
    }
    window.requests += 1;
    const statusClass = `${Math.floor(status / 100)}xx`;
    window.byStatus[statusClass] = (window.byStatus[statusClass] ?? 0) + 1;
    if (window.durationsMs.length < SAMPLE_SIZE) window.durationsMs.push(responseTimeMs);
    else {
      const slot = Math.floor(Math.random() * window.requests);
      if (slot < SAMPLE_SIZE) window.durationsMs[slot] = responseTimeMs;
    }
  });
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      const done = window;
      window = emptyWindow();
      log.info(summarize(done, intervalMs), 'requests answered');
    }, intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
