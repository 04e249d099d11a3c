/**
 * Closing the gateway (`gateway.close()`, what SIGTERM does; the last case through `npm start`)
 * finishes the requests in flight and then ends: a keep-alive connection whose request was still
 * running when the close began must not hold the close for the server's keep-alive timeout
 * (72 s), and an open event stream (endless by nature) must not hold it at all, nor a connection
 * that never asked anything; a request that stops arriving half-way is cut after the grace
 * (`SHUTDOWN_GRACE_MS`). The console's end-to-end test once waited out its hook's 60 s behind
 * one of them (docs/decisions/0117-graceful-shutdown.md).
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { simulatorPlugin } from '../../src/simulator/plugin.js';
import { expectEachReservationClosedOnce } from '../support/billing.js';
import { startChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, startGateway } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { accountEvents, syncUser } from '../support/sync-images.js';

/** A sync call takes 2 steps, `[sim:slow]` 10: one second in flight. */
const ENGINE = { SIM_STEP_MS: '100', POLL_INTERVAL_MS: '20' };
/** Far below the 72 s keep-alive timeout, far above a close's own work on a loaded machine. */
const CLOSE_WITHIN_MS = 8_000;
/** `std-image`'s price on the embedded default. */
const STD_PRICE = 20_000;

/**
 * The simulator on a server of its own, as a real upstream is: the built-in one shares the
 * gateway's server, which refuses the call's later requests (the result's download) once
 * closing — such a call ends 502 and is released, not charged (docs/decisions/0117-graceful-shutdown.md).
 */
async function separateUpstream() {
  const upstream = Fastify();
  await upstream.register(simulatorPlugin, { prefix: '/_sim', stepMs: Number(ENGINE.SIM_STEP_MS) });
  return { url: await upstream.listen({ host: '127.0.0.1', port: 0 }), close: () => upstream.close() };
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = Date.now();
  await work();
  return Date.now() - started;
}

/**
 * A synchronous call (1 s) in flight on a keep-alive connection when the gateway closes; then
 * the gateway again on the same data, for what the books say of it.
 */
async function syncCallInFlightAtClose(upstreamUrl?: string) {
  const data = tempDir();
  const env = { ...ENGINE, ...(upstreamUrl ? { SIMULATOR_URL: upstreamUrl } : {}) };
  const gw = await startGateway(env, { dataDir: data.path });
  const { api, accountId } = await syncUser(gw);
  // fetch keeps its connection alive: the connection becomes idle only after the close began.
  const pending = fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'std-image', prompt: 'a lighthouse closing time [sim:slow]' }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data?: unknown[] } }));
  await eventually(async () => ((await accountEvents(gw, accountId)).some((e) => e.type === 'QuotaReserved') ? true : undefined));

  const closeMs = await timed(() => gw.close());
  const answer = await pending;

  const again = await startGateway(env, { dataDir: data.path });
  try {
    const closedOnce = await expectEachReservationClosedOnce(again, accountId);
    const settled = (await accountEvents(again, accountId)).filter((e) => e.type === 'QuotaSettled').map((e) => (e.data as { charged: number }).charged);
    return { closeMs, answer, closedOnce, settled };
  } finally {
    await again.close();
    data.remove();
  }
}

describe('closing the gateway', () => {
  it('answers a call in flight on a keep-alive connection, settles it, then ends without waiting out the keep-alive timeout', async () => {
    const upstream = await separateUpstream();
    try {
      const { closeMs, answer, closedOnce, settled } = await syncCallInFlightAtClose(upstream.url);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toHaveLength(1);
      expect(closeMs).toBeLessThan(CLOSE_WITHIN_MS);
      expect(closedOnce).toBe(1);
      expect(settled).toEqual([STD_PRICE]);
    } finally {
      await upstream.close();
    }
  }, 30_000);

  it('on the built-in simulator: the call in flight ends 502, released and not charged, and the close is as quick', async () => {
    const { closeMs, answer, closedOnce, settled } = await syncCallInFlightAtClose();
    expect(answer.status).toBe(502);
    expect(closeMs).toBeLessThan(CLOSE_WITHIN_MS);
    expect(closedOnce).toBe(1);
    expect(settled).toEqual([]);
  }, 30_000);

  it('ends an open event stream instead of waiting for its client to leave', async () => {
    const gw = await startGateway(ENGINE);
    const { api } = await syncUser(gw);
    const res = await fetch(`${gw.url}/api/events/stream`, { headers: { authorization: `Bearer ${api.bearer}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain(': connected');

    const closeMs = await timed(() => gw.close());

    expect(closeMs).toBeLessThan(CLOSE_WITHIN_MS);
    // The stream ended cleanly: a reconnecting client resumes elsewhere with Last-Event-ID.
    let rest = await reader.read();
    while (!rest.done) rest = await reader.read();
    expect(rest.done).toBe(true);
  }, 30_000);

  it('cuts a request that stopped arriving half-way once the shutdown grace has passed', async () => {
    const gw = await startGateway({ ...ENGINE, SHUTDOWN_GRACE_MS: '1000' });
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    await once(socket, 'connect');
    // Headers begun, never finished: the request timeout that would end it is not checked while closing.
    socket.write('POST /v1/images/async/generations HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n');
    const cut = once(socket, 'close');
    await new Promise((r) => setTimeout(r, 100));

    const closeMs = await timed(() => gw.close());

    expect(closeMs).toBeGreaterThanOrEqual(1000);
    expect(closeMs).toBeLessThan(1000 + CLOSE_WITHIN_MS);
    await cut;
  }, 30_000);

  it('closes a connection that never asked anything at once, not after the grace', async () => {
    const gw = await startGateway({ ...ENGINE, SHUTDOWN_GRACE_MS: '30000' });
    // A browser's preconnect, or a pooled socket whose request was aborted while it connected.
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    await once(socket, 'connect');
    const closed = once(socket, 'close');

    const closeMs = await timed(() => gw.close());

    expect(closeMs).toBeLessThan(CLOSE_WITHIN_MS);
    await closed;
  }, 30_000);

  it('answers 503, not a reset, to a request that arrives just after the close began', async () => {
    const gw = await startGateway(ENGINE);
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    const ended = once(socket, 'close');

    const closing = gw.close();
    // The server stopped listening: the close of the HTTP server has begun.
    await eventually(async () => (gw.gateway.app.server.listening ? undefined : true), 10_000, 10);
    // Several sweeps later (every 50 ms), well within the second a silent connection is given.
    await new Promise((r) => setTimeout(r, 200));
    socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
    await ended;
    await closing;

    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
  }, 30_000);

  it('`npm start` on SIGTERM, with an open event stream and a silent connection, exits 0 within seconds', async () => {
    const data = tempDir();
    try {
      // A grace far beyond the bound: only what the close does on its own may end it in time.
      const running = await startChildGateway(data.path, { ...ENGINE, SHUTDOWN_GRACE_MS: '30000' });
      const admin = new Client(running.url);
      await admin.login('admin', ADMIN_PASSWORD);
      const stream = await fetch(`${running.url}/api/events/stream`, { headers: { cookie: admin.cookie! } });
      const reader = stream.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain(': connected');
      const silent = connect(Number(new URL(running.url).port), '127.0.0.1');
      await once(silent, 'connect');

      const exitMs = await timed(() => running.kill('SIGTERM'));

      expect(running.process.exitCode).toBe(0);
      expect(exitMs).toBeLessThan(CLOSE_WITHIN_MS);
      silent.destroy();
    } finally {
      data.remove();
    }
  }, 60_000);
});
