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
  /** The built-in simulator's requests (`/_sim`), apart: the http_* series are clients' traffic alone. */
  readonly simulatorHttpRequests: Counter<HttpLabels>;
  readonly simulatorHttpDuration: Histogram<HttpLabels>;
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
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) => new Counter({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: L[] = []) =>
    new Histogram({ name, help, labelNames, buckets, registers });
  return {
    registry,
    httpRequests: counter('gateway_http_requests_total', 'HTTP requests answered, by method, route pattern (unmatched: no route) and status.', [
      'method',
      'route',
      'status',
    ]),
    httpDuration: histogram(
      'gateway_http_request_duration_seconds',
      'Time from receiving a request to the end of its answer, by method, route pattern and status.',
      HTTP_BUCKETS,
      ['method', 'route', 'status'],
    ),
    simulatorHttpRequests: counter(
      'gateway_simulator_http_requests_total',
      'Requests to the built-in simulator (/_sim, mounted in this process), by method, route pattern and status; not in gateway_http_requests_total.',
      ['method', 'route', 'status'],
    ),
    simulatorHttpDuration: histogram(
      'gateway_simulator_http_request_duration_seconds',
      'Time from receiving a request to the built-in simulator to the end of its answer; not in gateway_http_request_duration_seconds.',
      HTTP_BUCKETS,
      ['method', 'route', 'status'],
    ),
    tasksSubmitted: counter('gateway_tasks_submitted_total', 'Tasks submitted (TaskSubmitted events, synchronous calls included), by family and model.', [
      'family',
      'model',
    ]),
    tasksSucceeded: counter('gateway_tasks_succeeded_total', 'Tasks that ended succeeded (TaskSucceeded events), by family and model.', ['family', 'model']),
    tasksFailed: counter('gateway_tasks_failed_total', 'Tasks that ended failed (TaskFailed events), by family and model.', ['family', 'model']),
    quotaReserved: counter('gateway_quota_reserved_units_total', 'Quota units reserved (QuotaReserved events), by model.', ['model']),
    quotaSettled: counter('gateway_quota_settled_units_total', 'Quota units charged when reservations were settled (QuotaSettled.charged), by model.', [
      'model',
    ]),
    quotaReleased: counter('gateway_quota_released_units_total', 'Quota units given back by released reservations (QuotaReleased events), by model.', [
      'model',
    ]),
    upstreamCalls: counter(
      'gateway_upstream_calls_total',
      'Upstream submits and polls made by this instance, by channel (id, and its name when the call was made), operation and outcome.',
      ['channel', 'channel_name', 'operation', 'outcome'],
    ),
    upstreamDuration: histogram(
      'gateway_upstream_call_duration_seconds',
      'Duration of upstream submits and polls, by channel (id and name), operation and outcome.',
      UPSTREAM_BUCKETS,
      ['channel', 'channel_name', 'operation', 'outcome'],
    ),
    callbackAttempts: counter(
      'gateway_callback_attempts_total',
      'Completion callback attempts (CallbackAttempted events), by outcome: delivered, http_error, no_answer.',
      ['outcome'],
    ),
    callbackDuration: histogram(
      'gateway_callback_attempt_duration_seconds',
      'Duration of completion callback attempts, as recorded in their events.',
      CALLBACK_BUCKETS,
    ),
    callbacksDelivered: counter('gateway_callbacks_delivered_total', 'Completion callbacks delivered (CallbackDelivered events).'),
    callbacksDeadLettered: counter(
      'gateway_callbacks_dead_lettered_total',
      'Completion callbacks given up after their last attempt (CallbackDeadLettered events).',
    ),
  };
}
