/**
 * The log of the started gateway (src/http/request-log.ts, docs/decisions/0141-production-process-and-logs.md):
 * requests at `debug`, one `info` summary per interval (a minute; shortened here), the simulator's
 * requests counted apart; an upstream failure is one `warn` line with its channel and reason, no
 * error, no stack.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startGateway, type TestGateway } from '../support/gateway.js';
import { syncUser } from '../support/sync-images.js';

type Line = Record<string, unknown> & { level: number; msg: string };

const started: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((gw) => gw.close()));
});

async function start(level: 'debug' | 'info', env: Record<string, string> = {}) {
  const lines: Line[] = [];
  const log = pino({ level }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
  const gw = await startGateway({ SIMULATOR: '1', CHANNEL_HEALTH_INTERVAL_MS: '0', ...env }, { log, requestSummaryMs: 250 });
  started.push(gw);
  return { gw, lines };
}

const summaries = (lines: readonly Line[]) => lines.filter((l) => l.msg === 'requests answered');

/** Sends the same small mix every test uses: three health checks, a 401, two simulator requests. */
async function traffic(gw: TestGateway): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
  for (let i = 0; i < 2; i++) expect((await fetch(`${gw.url}/_sim/_submits`)).status).toBe(200);
}

describe('request logs', () => {
  it('each request is one debug line; the summary at info counts them by status class, the simulator apart', async () => {
    const { gw, lines } = await start('debug');
    const from = lines.length;
    await traffic(gw);
    const totals = await eventually(async () => {
      const s = summaries(lines.slice(from));
      const sum = (f: (l: Line) => number) => s.reduce((n, l) => n + f(l), 0);
      const t = {
        requests: sum((l) => l.requests as number),
        ok: sum((l) => (l.byStatus as Record<string, number>)['2xx'] ?? 0),
        client: sum((l) => (l.byStatus as Record<string, number>)['4xx'] ?? 0),
        simulator: sum((l) => l.simulatorRequests as number),
      };
      return t.requests >= 4 && t.simulator >= 2 ? t : undefined;
    }, 5000);
    expect(totals).toEqual({ requests: 4, ok: 3, client: 1, simulator: 2 });
    const withTraffic = summaries(lines.slice(from)).find((l) => (l.requests as number) > 0)!;
    expect(withTraffic).toMatchObject({ level: 30, intervalSeconds: 0.25, p50Ms: expect.any(Number), p99Ms: expect.any(Number) });

    const perRequest = lines.slice(from).filter((l) => l.msg === 'request completed');
    expect(perRequest.map((l) => [l.level, l.url, l.status])).toEqual([
      [20, '/healthz', 200],
      [20, '/healthz', 200],
      [20, '/healthz', 200],
      [20, '/v1/models', 401],
      [20, '/_sim/_submits', 200],
      [20, '/_sim/_submits', 200],
    ]);
    // fastify's own per-request lines are off.
    expect(lines.filter((l) => l.msg === 'incoming request')).toEqual([]);
  });

  it('at LOG_LEVEL=info (the default) requests add no line of their own: only the summary', async () => {
    const { gw, lines } = await start('info');
    const from = lines.length;
    await traffic(gw);
    await eventually(async () => (summaries(lines.slice(from)).some((l) => (l.requests as number) > 0) ? true : undefined), 5000);
    expect(lines.slice(from).filter((l) => l.msg !== 'requests answered')).toEqual([]);
  });
});

describe('an upstream failure', () => {
  it('is one warn line with the channel and the reason: no error line, no stack', async () => {
    const { gw, lines } = await start('info', { SIM_STEP_MS: '0' });
    const { api } = await syncUser(gw);
    const from = lines.length;
    const r = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'a red door [sim:5xx]' });
    expect(r.status).toBeGreaterThanOrEqual(500);
    const taskId = r.headers.get('x-task-id');
    const after = lines.slice(from).filter((l) => l.msg !== 'requests answered');
    const warnings = after.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ channelId: expect.stringMatching(/^sim-/), reason: expect.stringMatching(/503/) });
    if (taskId) expect(warnings[0]!.taskId).toBe(taskId);
    expect(after.filter((l) => l.level >= 50)).toEqual([]);
    expect(JSON.stringify(after)).not.toMatch(/"stack"/);
  });
});
