/**
 * Prometheus `/metrics` of a started gateway, scraped over HTTP with its bearer token and parsed
 * as Prometheus parses it: the counters move across a submit → complete → settle cycle by what
 * the events say, callbacks are counted, nothing secret is exposed, and without the token the
 * endpoint does not exist.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EventDataOf } from '../../src/domain/events.js';
import { ADMIN_PASSWORD, adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { startReceiver } from '../support/receiver.js';

const METRICS_TOKEN = 'metrics-token-for-the-tests-0123456789';
const PROMPT = 'a lighthouse painted by prompt-marker-7f3a';

let gw: TestGateway;
let api: Client;
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway({ ...FAST_ENGINE, METRICS_TOKEN, ALLOW_LOOPBACK_OUTBOUND: '1', CALLBACK_CHECK_MS: '100' });
  const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
  accountId = user.accountId;
  apiKey = (await newToken(user.client)).key;
  api = new Client(gw.url, apiKey);
});
afterAll(() => gw.close());

interface Scrape {
  text: string;
  families: PrometheusFamily[];
  /** The same text with histograms read as untyped (see `scrape`): every `_count` series with its labels. */
  series: PrometheusFamily[];
}

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  // The parser folds a labelled histogram into one sample without labels (prom2json's old
  // layout); read as untyped, its `_bucket`, `_sum` and `_count` series keep their labels.
  const series = parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  return { text, families: parsePrometheusTextFormat(text), series };
}

/** The sum of the samples of `name` whose labels include `labels` (a histogram's observations: `<name>_count`). */
function valueOf(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return s.series
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value), 0);
}

const delta = (before: Scrape, after: Scrape, name: string, labels?: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);

async function eventsOfTask(taskId: string) {
  const task = await gw.gateway.deps.events.readStream(`task-${taskId}`);
  const account = (await gw.gateway.deps.events.readStream(`account-${accountId}`)).filter((e) => (e.data as { taskId?: string }).taskId === taskId);
  return { task, account };
}

let completedTaskId = '';

describe('GET /metrics', () => {
  it('answers 401 without the bearer token, and with a wrong one', async () => {
    const none = await fetch(`${gw.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await none.json()).toMatchObject({ code: 'unauthorized' });
    const wrong = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    // An API key of the gateway is no metrics token.
    const key = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(key.status).toBe(401);
  });

  it('a submit → complete → settle cycle moves the task, quota, upstream and HTTP counters by what the events say', async () => {
    const before = await scrape();
    const submitted = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: PROMPT, n: 1 });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const taskId = submitted.body.id as string;
    completedTaskId = taskId;
    expect((await waitForImageTask(api, taskId)).status).toBe('completed');
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());

    const { task, account } = await eventsOfTask(taskId);
    const submit = task.find((e) => e.type === 'TaskSubmitted')!.data as EventDataOf<'TaskSubmitted'>;
    const upstream = task.find((e) => e.type === 'UpstreamSubmitted')!.data as EventDataOf<'UpstreamSubmitted'>;
    const settled = account.find((e) => e.type === 'QuotaSettled')!.data as EventDataOf<'QuotaSettled'>;
    const released = account.filter((e) => e.type === 'QuotaReleased').reduce((sum, e) => sum + (e.data as EventDataOf<'QuotaReleased'>).amount, 0);
    expect(submit.reserved).toBeGreaterThan(0);
    expect(settled.charged).toBeGreaterThan(0);
    const taskLabels = { family: submit.family, model: 'anime-diffusion-4-5-full' };
    const byModel = { model: 'anime-diffusion-4-5-full' };

    // The counters follow the log a moment after the settlement.
    const after = await eventually(async () => {
      const s = await scrape();
      return delta(before, s, 'gateway_tasks_succeeded_total', taskLabels) >= 1 &&
        delta(before, s, 'gateway_quota_settled_units_total', byModel) >= settled.charged
        ? s
        : undefined;
    });
    expect(delta(before, after, 'gateway_tasks_submitted_total', taskLabels)).toBe(1);
    expect(delta(before, after, 'gateway_tasks_succeeded_total', taskLabels)).toBe(1);
    expect(delta(before, after, 'gateway_tasks_failed_total')).toBe(0);
    // Spending by model.
    expect(delta(before, after, 'gateway_quota_reserved_units_total', byModel)).toBe(submit.reserved);
    expect(delta(before, after, 'gateway_quota_settled_units_total', byModel)).toBe(settled.charged);
    expect(delta(before, after, 'gateway_quota_released_units_total', byModel)).toBe(released);
    expect(delta(before, after, 'gateway_quota_settled_units_total', { model: 'unknown' })).toBe(0);

    // The upstream calls, by the channel the task went to: its id and its name.
    const channelName = (await gw.gateway.deps.views.get<{ name: string }>('channels', upstream.channelId))!.doc.name;
    expect(channelName).toMatch(/\S/);
    const channel = { channel: upstream.channelId, channel_name: channelName };
    expect(delta(before, after, 'gateway_upstream_calls_total', { ...channel, operation: 'submit', outcome: 'ok' })).toBe(1);
    expect(delta(before, after, 'gateway_upstream_call_duration_seconds_count', { ...channel, operation: 'submit', outcome: 'ok' })).toBe(1);
    expect(delta(before, after, 'gateway_upstream_calls_total', { ...channel, operation: 'poll', outcome: 'succeeded' })).toBe(1);

    // HTTP requests by route pattern and status, with their latency.
    for (const name of ['gateway_http_request_duration_seconds', 'gateway_upstream_call_duration_seconds']) {
      expect(after.families.find((f) => f.name === name)?.type, name).toBe('HISTOGRAM');
    }
    const post = { method: 'POST', route: '/v1/images/async/generations', status: '200' };
    expect(delta(before, after, 'gateway_http_requests_total', post)).toBe(1);
    expect(delta(before, after, 'gateway_http_request_duration_seconds_count', post)).toBe(1);
    expect(
      delta(before, after, 'gateway_http_requests_total', { method: 'GET', route: '/v1/images/async/generations/:task_id', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    // The scrape before this one was counted too, under its own route.
    expect(valueOf(after, 'gateway_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1);

    // Gauges: in flight, projection lag, event-loop lag (the default Node.js metrics), all with the role.
    // The circuit of the channel that served the task is closed (0), per channel.
    expect(valueOf(after, 'gateway_channel_circuit_open', channel)).toBe(0);
    for (const name of [
      'gateway_poller_tasks',
      'gateway_tasks_in_flight',
      'gateway_projection_lag_seconds',
      'nodejs_eventloop_lag_seconds',
      'gateway_submit_lease_window_total',
    ]) {
      const family = after.families.find((f) => f.name === name);
      expect(family?.metrics.length, name).toBeGreaterThan(0);
      for (const m of family!.metrics) {
        expect(m.labels?.role, name).toBe('all');
        expect(Number(m.value), name).toBeGreaterThanOrEqual(0);
      }
    }
    expect(
      after.families
        .find((f) => f.name === 'gateway_tasks_in_flight')!
        .metrics.map((m) => m.labels?.stage)
        .sort(),
    ).toEqual(['dispatched', 'submitted']);
    // Nothing here was submitted twice: the submit lease's window, counted by the engine, is empty.
    expect(valueOf(after, 'gateway_submit_lease_window_total', { event: 'claimed_over_open' })).toBe(0);
    expect(valueOf(after, 'gateway_submit_lease_window_total', { event: 'orphaned_job' })).toBe(0);

    // The process that derives the counters is one of the role's, in /readyz.
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { processes: Record<string, { last_pass: string | null }> };
    expect(ready.processes.metrics?.last_pass).toBeTruthy();
  });

  it('counts callback attempts and deliveries', async () => {
    const receiver = await startReceiver(() => 200);
    try {
      const before = await scrape();
      const lyrics = await api.post('/tune/submit/LYRICS', { prompt: PROMPT, hookUrl: receiver.url });
      expect(lyrics.status, JSON.stringify(lyrics.body)).toBe(200);
      const after = await eventually(async () => {
        const s = await scrape();
        return delta(before, s, 'gateway_callbacks_delivered_total') >= 1 ? s : undefined;
      }, 15_000);
      expect(receiver.received).toHaveLength(1);
      expect(delta(before, after, 'gateway_callbacks_delivered_total')).toBe(1);
      expect(delta(before, after, 'gateway_callback_attempts_total', { outcome: 'delivered' })).toBe(1);
      expect(delta(before, after, 'gateway_callback_attempt_duration_seconds_count')).toBe(1);
      expect(delta(before, after, 'gateway_callbacks_dead_lettered_total')).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('exposes no secrets, prompts or raw URLs', async () => {
    const { text } = await scrape();
    const channelKeys = (await gw.gateway.deps.views.find<{ key: string }>('channels', {})).map((c) => c.doc.key);
    expect(channelKeys.length).toBeGreaterThan(0);
    const secrets = [
      METRICS_TOKEN,
      apiKey,
      ADMIN_PASSWORD,
      readFileSync(join(gw.dataDir, 'asset-signing.key'), 'utf8').trim(),
      ...channelKeys,
      'prompt-marker-7f3a',
      completedTaskId,
    ];
    expect(completedTaskId).not.toBe('');
    for (const secret of secrets) expect(text.includes(secret), `the metrics contain ${secret}`).toBe(false);
  });

  it('the Grafana dashboard (docs/grafana-dashboard.json) reads only metrics the gateway exposes', async () => {
    const { series } = await scrape();
    const exposed = new Set(series.map((f) => f.name));
    const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const read = new Set(dashboard.panels.flatMap((p) => p.targets ?? []).flatMap((t) => t.expr.match(/\b(gateway|nodejs|process)_\w+/g) ?? []));
    expect(read.size).toBeGreaterThan(10);
    for (const name of read) expect(exposed.has(name), name).toBe(true);
  });

  it('is not in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(doc.paths['/metrics']).toBeUndefined();
  });
});

describe('METRICS_TOKEN', () => {
  it('an invalid token refuses to start, in one line naming it', () => {
    for (const token of ['', 'too-short', 'has a space in it, sixteen+']) {
      let message = '';
      try {
        loadConfig({ METRICS_TOKEN: token });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^invalid configuration: METRICS_TOKEN: at least 16 printable ASCII characters/);
      expect(message).not.toContain('\n');
    }
  });

  it('without it, /metrics does not exist (404) and nothing is collected', async () => {
    const plain = await startGateway();
    try {
      expect(plain.gateway.deps.metrics).toBeUndefined();
      expect((await fetch(`${plain.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
