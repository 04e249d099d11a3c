/**
 * Every family's upstream submit (the async adapters, and the synchronous calls, streamed or not)
 * sends the task's client reference as its `Idempotency-Key` header, so an upstream that honours
 * it (this gateway does) answers a repeated submit with the job it already made. The upstream
 * here is a plain HTTP server that keeps each request's headers and answers 503.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelDoc } from '../../projections/channels.js';
import type { EventDataOf } from '../../src/domain/events.js';
import { UpstreamError, type UpstreamContext } from '../../src/engine/channels/upstream.js';
import type { GatewayDeps } from '../../src/http/deps.js';
import { upstreamAdapters } from '../../src/families/index.js';
import { callPicgen, PICGEN_GENERATIONS_PATH } from '../../src/families/picgen/upstream.js';
import { callChat, callImages, callImagesStream } from '../../src/families/sync-images/upstream.js';

const received: { method: string; path: string; idempotencyKey: string | undefined }[] = [];
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      received.push({ method: req.method ?? '', path: req.url ?? '', idempotencyKey: Array.isArray(key) ? key[0] : key });
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'keeping the headers only' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await once(server, 'close');
});

const channel: ChannelDoc = {
  channelId: 'ch_keys',
  name: 'keys',
  family: 'images',
  baseUrl: '',
  key: 'channel-key',
  models: ['m'],
  modelMapping: {},
  groups: ['default'],
  priority: 0,
  weight: 1,
  status: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

/** An action each family's submit path accepts. */
const ACTIONS: Record<string, string> = { art: 'IMAGINE', tune: 'MUSIC', images: 'generate' };

function taskOf(family: string, taskId: string): EventDataOf<'TaskSubmitted'> {
  return {
    taskId,
    family,
    action: ACTIONS[family] ?? 'text2video',
    model: 'm',
    accountId: 'acc',
    tokenId: 'tok',
    group: 'default',
    channelCandidates: [channel.channelId],
    request: { prompt: 'a key on every submit' },
    reservationId: `res-${taskId}`,
    reserved: 1,
    basis: { model: 'm', group: 'default', unit: 'image', unitPrice: 1, groupRatioPermille: 1000, units: 1 },
    createdAt: 1_700_000_000,
  };
}

const ctxOf = (family: string, taskId: string): UpstreamContext => ({
  channel,
  baseUrl,
  upstreamModel: 'm',
  task: taskOf(family, taskId),
  idempotencyKey: `${taskId}:${channel.channelId}`,
});

describe('the client reference on every upstream submit', () => {
  it.each(upstreamAdapters.map((a) => [a.family, a] as const))('%s: the async submit sends Idempotency-Key', async (family, adapter) => {
    const before = received.length;
    await expect(adapter.submit(ctxOf(family, `task_${family}`))).rejects.toBeInstanceOf(UpstreamError);
    expect(received.slice(before)).toEqual([{ method: 'POST', path: expect.any(String), idempotencyKey: `task_${family}:ch_keys` }]);
  });

  it('the synchronous calls (images, streamed images, chat, picgen) send it too', async () => {
    // Never read: every call here fails at the upstream's 503, before anything is fetched or kept.
    const deps = undefined as unknown as GatewayDeps;
    const before = received.length;
    const calls = [
      () => callImages(deps, ctxOf('sync-images', 'task_images'), {}),
      () => callImagesStream(deps, ctxOf('sync-images', 'task_stream'), {}, () => undefined),
      () => callChat(deps, ctxOf('sync-images', 'task_chat'), {}),
      () => callPicgen(deps, ctxOf('picgen', 'task_picgen'), PICGEN_GENERATIONS_PATH, {}),
    ];
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(UpstreamError);
    expect(received.slice(before).map((r) => r.idempotencyKey)).toEqual(
      ['task_images', 'task_stream', 'task_chat', 'task_picgen'].map((id) => `${id}:ch_keys`),
    );
  });
});
