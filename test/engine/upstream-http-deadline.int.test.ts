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
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
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
// A test that failed leaves its calls' connections open: the next one starts from none.
afterEach(async () => {
  server.closeAllConnections();
  await untilClosed();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Each call's outcome (its error's message), handled from the start: a call that ends early leaves no unhandled rejection. */
const outcomesOf = (calls: Promise<unknown>[]): Promise<string>[] =>
  calls.map((call) =>
    call.then(
      () => 'answered',
      (err: Error) => err.message,
    ),
  );

/** Each outcome, or 'still pending' for a call that has not ended `graceMs` after `endsAt`. */
async function endedBy(outcomes: Promise<string>[], endsAt: number, graceMs = 3_000): Promise<string[]> {
  const pending = new Promise<string>((resolve) => setTimeout(() => resolve('still pending'), endsAt - Date.now() + graceMs));
  return Promise.all(outcomes.map((outcome) => Promise.race([outcome, pending])));
}

/**
 * Waits (until `untilMs` at most: a loaded machine connects slowly) until every call reads its
 * body, then collects garbage, as a busy gateway would at some point of a long read. Resolves
 * with how many were reading then.
 */
async function collectWhileReading(untilMs: number): Promise<number> {
  while (open < CALLS && Date.now() < untilMs) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  if (!gc) throw new Error('gc() is not exposed: run with --expose-gc (vitest.config.ts)');
  for (let i = 0; i < 3; i++) gc();
  return open;
}

async function untilClosed(): Promise<number> {
  const until = Date.now() + 3_000;
  while (open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return open;
}

it('a body that never ends is cut off at the deadline, its connection closed', async () => {
  // Long enough for all 20 to be reading their bodies when it passes, on a loaded machine too.
  const deadlineMs = 5_000;
  const started = Date.now();
  const outcomes = outcomesOf(Array.from({ length: CALLS }, () => upstreamJson('GET', url, { key: 'k', timeoutMs: deadlineMs })));
  expect(await collectWhileReading(started + deadlineMs - 1_000)).toBe(CALLS);
  const ended = await endedBy(outcomes, started + deadlineMs);
  expect(new Set(ended)).toEqual(new Set([`upstream answer broke off: no complete answer within ${deadlineMs} ms`]));
  expect(await untilClosed()).toBe(0);
});

it("a body that never ends is cut off when the caller aborts (the task's own deadline), its connection closed", async () => {
  const task = new AbortController();
  const outcomes = outcomesOf(Array.from({ length: CALLS }, () => upstreamJson('GET', url, { key: 'k', timeoutMs: 30_000, signal: task.signal })));
  expect(await collectWhileReading(Date.now() + 10_000)).toBe(CALLS);
  task.abort(new Error('the task ran out of time'));
  const ended = await endedBy(outcomes, Date.now());
  expect(new Set(ended)).toEqual(new Set(['upstream answer broke off: the task ran out of time']));
  expect(await untilClosed()).toBe(0);
});
