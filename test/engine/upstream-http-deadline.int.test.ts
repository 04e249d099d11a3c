/**
 * An upstream that sends its headers and then a byte now and then, never the end: the call must
 * end at its deadline, or when the caller aborts, and close the connection, even when a garbage
 * collection ran while the body was read. fetch follows the call's signal through a weak
 * reference that a collection can cut; its own abort then never reaches a body whose reader
 * waits (before upstream-http.ts's bodyChunks: 20 calls at once all still pending seconds after
 * their deadline whenever a full collection ran under them, and never without one). That left
 * polls holding their channel's slot, and a stopping gateway waiting for them for good.
 * Needs `gc()`: vitest.config.ts starts the test processes with --expose-gc.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { upstreamJson } from '../../src/engine/channels/upstream-http.js';

const CALLS = 20;
const gc = (globalThis as { gc?: () => void }).gc;
let server: Server;
let url: string;
let open = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    open++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"status":"in_progress","progress":');
    const timer = setInterval(() => res.write(' '), 20);
    res.once('close', () => {
      clearInterval(timer);
      open--;
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/poll`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Resolves with each call's outcome, or 'still pending' if it has not ended `graceMs` after `endsAt`. */
async function outcomes(calls: Promise<unknown>[], endsAt: number, graceMs = 2_000): Promise<string[]> {
  const pending = new Promise<string>((resolve) => setTimeout(() => resolve('still pending'), endsAt - Date.now() + graceMs));
  return Promise.all(
    calls.map((call) =>
      Promise.race([
        call.then(
          () => 'answered',
          (err: Error) => err.message,
        ),
        pending,
      ]),
    ),
  );
}

/** Waits until every call reads its body, then collects garbage, as a busy gateway would at some point of a long read. */
async function collectWhileReading(): Promise<void> {
  while (open < CALLS) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  if (!gc) throw new Error('gc() is not exposed: run with --expose-gc (vitest.config.ts)');
  for (let i = 0; i < 3; i++) gc();
}

async function untilClosed(): Promise<number> {
  const until = Date.now() + 2_000;
  while (open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return open;
}

it('a body that never ends is cut off at the deadline, its connection closed', async () => {
  const started = Date.now();
  const calls = Array.from({ length: CALLS }, () => upstreamJson('GET', url, { key: 'k', timeoutMs: 300 }));
  await collectWhileReading();
  const ended = await outcomes(calls, started + 300);
  expect(new Set(ended)).toEqual(new Set(['upstream answer broke off: no complete answer within 300 ms']));
  expect(await untilClosed()).toBe(0);
});

it("a body that never ends is cut off when the caller aborts (the task's own deadline), its connection closed", async () => {
  const task = new AbortController();
  const calls = Array.from({ length: CALLS }, () => upstreamJson('GET', url, { key: 'k', timeoutMs: 30_000, signal: task.signal }));
  await collectWhileReading();
  task.abort(new Error('the task ran out of time'));
  const ended = await outcomes(calls, Date.now());
  expect(new Set(ended)).toEqual(new Set(['upstream answer broke off: the task ran out of time']));
  expect(await untilClosed()).toBe(0);
});
