/**
 * The downstream event stream on the embedded default: server-sent events read from the event
 * store itself (the in-process bus carries nothing downstream; the Kafka topics are checked with
 * the distributed deployment, test/reliability/split-roles.e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/engine/outbound/event-envelope.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

let gw: TestGateway;
let admin: Client;
let alice: { api: Client; session: Client; accountId: string };
let bob: { api: Client; accountId: string };

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
  const a = await newUser(admin, { credit: 1_000_000 });
  alice = { api: new Client(gw.url, (await newToken(a.client)).key), session: a.client, accountId: a.accountId };
  const b = await newUser(admin, { credit: 1_000_000 });
  bob = { api: new Client(gw.url, (await newToken(b.client)).key), accountId: b.accountId };
});
afterAll(() => gw.close());

/** Reads server-sent events until `enough` says so (or the time runs out). */
async function readSse(url: string, headers: Record<string, string>, enough: (events: EventEnvelope[]) => boolean, timeoutMs = 8000) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const events: { id: string; envelope: EventEnvelope }[] = [];
  try {
    const res = await fetch(url, { headers, signal: controller.signal });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const id = /^id: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (id && data) events.push({ id, envelope: JSON.parse(data) as EventEnvelope });
      }
      if (enough(events.map((e) => e.envelope))) break;
    }
  } catch (err) {
    if (!(err instanceof Error && err.name === 'AbortError')) throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

describe('downstream event streams', () => {
  it('the SSE stream shows a user only their own account, and resumes after Last-Event-ID', async () => {
    const first = await alice.api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'sse one' });
    await bob.api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'not for alice' });
    await waitForImageTask(alice.api, first.body.id);
    const headers = { cookie: alice.session.cookie! };
    const all = await readSse(`${gw.url}/api/events/stream?from=beginning`, headers, (es) =>
      es.some((e) => e.key === first.body.id && e.type === 'TaskSucceeded'),
    );
    expect(all.length).toBeGreaterThan(3);
    for (const e of all) expect(e.envelope.accountId).toBe(alice.accountId);

    const middle = all[Math.floor(all.length / 2)]!;
    const resumed = await readSse(`${gw.url}/api/events/stream`, { ...headers, 'last-event-id': middle.id }, (es) =>
      es.some((e) => e.key === first.body.id && e.type === 'TaskSucceeded'),
    );
    expect(resumed[0]!.id).toBe(all[all.indexOf(middle) + 1]!.id);
    expect(resumed.map((e) => e.id)).toEqual(
      all
        .slice(all.indexOf(middle) + 1)
        .map((e) => e.id)
        .slice(0, resumed.length),
    );
  });

  it('an administrator sees every account', async () => {
    const events = await readSse(
      `${gw.url}/api/events/stream?from=beginning`,
      { cookie: admin.cookie! },
      (es) => new Set(es.map((e) => e.accountId)).size >= 2,
    );
    const accounts = new Set(events.map((e) => e.envelope.accountId));
    expect(accounts.has(alice.accountId) && accounts.has(bob.accountId)).toBe(true);
  });

  it('refuses an anonymous caller and a malformed Last-Event-ID', async () => {
    expect((await fetch(`${gw.url}/api/events/stream`)).status).toBe(401);
    expect((await fetch(`${gw.url}/api/events/stream`, { headers: { cookie: admin.cookie!, 'last-event-id': 'abc' } })).status).toBe(400);
  });
});
