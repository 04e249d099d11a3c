/** The periodic health check of channels (src/engine/channels/channel-health-check.ts, channel-probe.ts) against a loopback upstream. */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelDoc } from '../../projections/channels.js';
import { createChannelHealthCheck } from '../../src/engine/channels/channel-health-check.js';
import { createChannelHealth, type ChannelHealth } from '../../src/engine/channels/channel-health.js';
import { HEALTH_CHECK_TASK_ID } from '../../src/engine/channels/channel-probe.js';
import { asyncImagesUpstream } from '../../src/families/images/upstream.js';

const log = pino({ level: 'silent' });

/** What each path answers: a status, or `hang` (never answers). */
const answers = new Map<string, number | 'hang'>();
const seen: { method: string; path: string; authorization: string | undefined }[] = [];
let server: Server;
let origin = '';

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? '';
    seen.push({ method: req.method ?? '', path, authorization: req.headers.authorization });
    const answer = answers.get(path.split('/')[1] ?? '') ?? 404;
    if (answer === 'hang') return;
    res.writeHead(answer, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `answered ${answer}` } }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
});

function channel(channelId: string, family: string, over: Partial<ChannelDoc> = {}): ChannelDoc {
  return {
    channelId,
    name: channelId,
    family,
    // Each channel on its own first path segment, so each answers as the test says.
    baseUrl: `${origin}/${channelId}`,
    key: `key-${channelId}`,
    models: ['m'],
    modelMapping: {},
    groups: [],
    priority: 0,
    weight: 1,
    status: 1,
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-01-01T00:00:00Z',
    ...over,
  };
}

function checker(channels: ChannelDoc[], health: ChannelHealth) {
  return createChannelHealthCheck({
    catalog: { channels: () => channels },
    health,
    upstreams: new Map([['images', asyncImagesUpstream]]),
    selfUrl: () => origin,
    log,
    timeoutMs: 300,
  });
}

describe('the channel health check', () => {
  it("asks an async family's upstream for a task it never handed out, and a family without a poll for its base URL", async () => {
    seen.length = 0;
    const health = createChannelHealth({ failures: 3, halfOpenAfterMs: 60_000, log, clock: () => new Date() });
    const pass = checker([channel('async-up', 'images'), channel('sync-up', 'sync-image'), channel('off', 'images', { status: 2 })], health);
    expect(await pass.runOnce()).toBe(2);
    expect(seen.map((s) => `${s.method} ${s.path}`).sort()).toEqual([`GET /async-up/v1/images/async/generations/${HEALTH_CHECK_TASK_ID}`, 'GET /sync-up']);
    expect(seen.find((s) => s.path.startsWith('/async-up'))?.authorization).toBe('Bearer key-async-up');
    // "Not found" is an answer: both are up. The disabled channel was not asked.
    for (const id of ['async-up', 'sync-up']) expect(health.of(id)).toMatchObject({ state: 'closed', consecutiveFailures: 0, lastError: undefined });
    expect(health.of('async-up').lastCheckAt).toBeInstanceOf(Date);
    expect(health.of('off').lastCheckAt).toBeUndefined();
    expect(pass.lastPass()).toBeInstanceOf(Date);
  });

  it('5xx, 429 and no answer in time are failures; a refusal (401) is an answer', async () => {
    answers.set('async-503', 503);
    answers.set('sync-429', 429);
    answers.set('async-hang', 'hang');
    answers.set('async-401', 401);
    const health = createChannelHealth({ failures: 2, halfOpenAfterMs: 60_000, log, clock: () => new Date() });
    const channels = [channel('async-503', 'images'), channel('sync-429', 'sync-image'), channel('async-hang', 'images'), channel('async-401', 'images')];
    const pass = checker(channels, health);
    await pass.runOnce();
    expect(health.of('async-503')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 1,
      lastError: expect.stringMatching(/^health check: poll: upstream answered 503/),
    });
    expect(health.of('sync-429')).toMatchObject({ consecutiveFailures: 1, lastError: expect.stringMatching(/answered 429/) });
    expect(health.of('async-hang')).toMatchObject({ consecutiveFailures: 1, lastError: 'health check: no answer within 300 ms' });
    expect(health.of('async-401')).toMatchObject({ consecutiveFailures: 0, lastError: undefined });
    await pass.runOnce();
    for (const id of ['async-503', 'sync-429', 'async-hang']) expect(health.of(id).state, id).toBe('open');
    expect(health.of('async-401').state).toBe('closed');
    // Open and not yet due for a trial: left alone.
    seen.length = 0;
    expect(await pass.runOnce()).toBe(1);
    expect(seen.map((s) => s.path)).toEqual([`/async-401/v1/images/async/generations/${HEALTH_CHECK_TASK_ID}`]);
  });

  it('the check is the trial of an open channel: a recovered upstream closes it without any task', async () => {
    answers.set('flaky', 503);
    const health = createChannelHealth({ failures: 1, halfOpenAfterMs: 100, log, clock: () => new Date() });
    const pass = checker([channel('flaky', 'images')], health);
    await pass.runOnce();
    expect(health.of('flaky').state).toBe('open');
    answers.set('flaky', 404);
    await new Promise((r) => setTimeout(r, 150));
    await pass.runOnce();
    expect(health.of('flaky')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('forgets the state of deleted channels', async () => {
    answers.set('deleted', 503);
    const health = createChannelHealth({ failures: 1, halfOpenAfterMs: 60_000, log, clock: () => new Date() });
    const channels = [channel('deleted', 'images')];
    const pass = checker(channels, health);
    await pass.runOnce();
    expect(health.snapshot().map((s) => s.channelId)).toEqual(['deleted']);
    channels.length = 0;
    await pass.runOnce();
    expect(health.snapshot()).toEqual([]);
  });
});
