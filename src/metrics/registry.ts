/**
 * The gateway's Prometheus instruments, in one registry per gateway instance: tests start many
 * gateways in one process, so the library's global default registry is never used. Every
 * metric carries the instance's `role` (an api and a worker scraped side by side stay apart).
 * Label values are bounded and carry no secrets: route patterns (never raw URLs), families,
 * catalog model names, channel ids, outcomes. The gauges read at scrape time are registered on
 * the same registry by metrics/state-gauges.ts.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';

/** Seconds: from a fast health check to a slow synchronous generation. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds: an upstream submit or poll, up to the long synchronous calls. */
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds: a callback attempt, bounded by CALLBACK_TIMEOUT_MS. */
const CALLBACK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type HttpLabels = 'method' | 'route' | 'status';
export type TaskLabels = 'family' | 'model';
export type UpstreamLabels = 'channel' | 'operation' | 'outcome';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<HttpLabels>;
  readonly httpDuration: Histogram<HttpLabels>;
  readonly tasksSubmitted: Counter<TaskLabels>;
  readonly tasksSucceeded: Counter<TaskLabels>;
  readonly tasksFailed: Counter<TaskLabels>;
  readonly quotaReserved: Counter;
  readonly quotaSettled: Counter;
  readonly quotaReleased: Counter;
  readonly upstreamCalls: Counter<UpstreamLabels>;
  readonly upstreamDuration: Histogram<UpstreamLabels>;
  readonly callbackAttempts: Counter<'outcome'>;
  readonly callbackDuration: Histogram;
  readonly callbacksDelivered: Counter;
  readonly callbacksDeadLettered: Counter;
}

export function createGatewayMetrics(config: Pick<Config, 'role'>): GatewayMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: config.role });
  // Process and Node.js metrics, event-loop lag among them, under their usual names (no prefix),
  // so the common Node.js dashboards read them too.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern (unmatched: no route) and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    tasksSubmitted: new Counter({
      name: 'gateway_tasks_submitted_total',
      help: 'Tasks submitted (TaskSubmitted events, synchronous calls included), by family and model.',
      labelNames: ['family', 'model'],
      registers,
    }),
    tasksSucceeded: new Counter({
      name: 'gateway_tasks_succeeded_total',
      help: 'Tasks that ended succeeded (TaskSucceeded events), by family and model.',
      labelNames: ['family', 'model'],
      registers,
    }),
    tasksFailed: new Counter({
      name: 'gateway_tasks_failed_total',
      help: 'Tasks that ended failed (TaskFailed events), by family and model.',
      labelNames: ['family', 'model'],
      registers,
    }),
    quotaReserved: new Counter({ name: 'gateway_quota_reserved_units_total', help: 'Quota units reserved (QuotaReserved events).', registers }),
    quotaSettled: new Counter({
      name: 'gateway_quota_settled_units_total',
      help: 'Quota units charged when reservations were settled (QuotaSettled.charged).',
      registers,
    }),
    quotaReleased: new Counter({
      name: 'gateway_quota_released_units_total',
      help: 'Quota units given back by released reservations (QuotaReleased events).',
      registers,
    }),
    upstreamCalls: new Counter({
      name: 'gateway_upstream_calls_total',
      help: 'Upstream submits and polls made by this instance, by channel id, operation and outcome.',
      labelNames: ['channel', 'operation', 'outcome'],
      registers,
    }),
    upstreamDuration: new Histogram({
      name: 'gateway_upstream_call_duration_seconds',
      help: 'Duration of upstream submits and polls, by channel id, operation and outcome.',
      labelNames: ['channel', 'operation', 'outcome'],
      buckets: UPSTREAM_BUCKETS,
      registers,
    }),
    callbackAttempts: new Counter({
      name: 'gateway_callback_attempts_total',
      help: 'Completion callback attempts (CallbackAttempted events), by outcome: delivered, http_error, no_answer.',
      labelNames: ['outcome'],
      registers,
    }),
    callbackDuration: new Histogram({
      name: 'gateway_callback_attempt_duration_seconds',
      help: 'Duration of completion callback attempts, as recorded in their events.',
      buckets: CALLBACK_BUCKETS,
      registers,
    }),
    callbacksDelivered: new Counter({
      name: 'gateway_callbacks_delivered_total',
      help: 'Completion callbacks delivered (CallbackDelivered events).',
      registers,
    }),
    callbacksDeadLettered: new Counter({
      name: 'gateway_callbacks_dead_lettered_total',
      help: 'Completion callbacks given up after their last attempt (CallbackDeadLettered events).',
      registers,
    }),
  };
}
