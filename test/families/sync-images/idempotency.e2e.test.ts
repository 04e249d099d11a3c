/**
 * An abandoned synchronous call is neither lost nor charged twice: `Idempotency-Key` on
 * `/v1/images/generations`, `/v1/images/edits` and `/v1/chat/completions` (a retry answers the
 * first call's result, waiting for it while it runs), and the result by the call's task id
 * (`GET …/{id}`, owner only). Black-box, with the official `openai` client where the route is
 * OpenAI-shaped. (The client's `idempotencyKey` option sends nothing for OpenAI — it has no
 * idempotency header configured — so the header is given as a request header.)
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../../src/ports/event-store.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../../support/gateway.js';
import { pngSize } from '../../support/images.js';
import { accountEvents, syncUser, TINY_PNG } from '../../support/sync-images.js';

/** A sync call takes 2 steps (200 ms), `[sim:slow]` 10 (1 s): long enough to abort or retry mid-call. */
const ENGINE = { SIM_STEP_MS: '100', POLL_INTERVAL_MS: '20' };
const STD_PRICE = 20_000;
const RETENTION_SECONDS = 7200;

let gw: TestGateway;
let client: OpenAI;
let api: Client;
let session: Client;
let accountId: string;
let other: Client;
/** The gateway's clock runs this far ahead of the real one (the expiry test moves it). */
let clockOffsetMs = 0;

beforeAll(async () => {
  gw = await startGateway({ ...ENGINE, ASSET_RETENTION_SECONDS: String(RETENTION_SECONDS) }, { clock: () => new Date(Date.now() + clockOffsetMs) });
  const user = await syncUser(gw);
  accountId = user.accountId;
  api = user.api;
  session = user.session;
  client = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const stranger = await newUser(user.admin, { credit: 1_000_000 });
  other = new Client(gw.url, (await newToken(stranger.client)).key);
});
afterAll(() => gw.close());

let keys = 0;
const newKey = () => `sync-retry-${process.pid}-${++keys}`;
const withKey = (key: string, extra: OpenAI.RequestOptions = {}): OpenAI.RequestOptions => ({ ...extra, headers: { 'idempotency-key': key } });

const taskIdOf = (e: RecordedEvent): string | undefined => (e.data as { taskId?: string }).taskId;

/** What the account stream holds for one task: its reservations, settlements and releases. */
async function moneyOf(taskId: string) {
  const events = (await accountEvents(gw, accountId)).filter((e) => taskIdOf(e) === taskId);
  const of = (type: string) => events.filter((e) => e.type === type);
  return {
    reserved: of('QuotaReserved').length,
    settled: of('QuotaSettled').map((e) => (e.data as { charged: number }).charged),
    released: of('QuotaReleased').length,
  };
}

/** The task of the account's next reservation after `count` reservations, once it is open (a call in flight). */
async function nextTask(count: number): Promise<string> {
  return eventually(
    async () => {
      const reserved = (await accountEvents(gw, accountId)).filter((e) => e.type === 'QuotaReserved');
      const taskId = reserved.length > count ? taskIdOf(reserved[count]!) : undefined;
      if (!taskId) return undefined;
      return (await gw.gateway.deps.events.readStream(`task-${taskId}`)).length > 0 ? taskId : undefined;
    },
    10_000,
    10,
  );
}

const reservationCount = async () => (await accountEvents(gw, accountId)).filter((e) => e.type === 'QuotaReserved').length;

describe('Idempotency-Key on synchronous calls', () => {
  it('images.generate: a retry answers the same body and x-task-id, and the account is charged once', async () => {
    const key = newKey();
    const params = { model: 'std-image', prompt: 'a harbour at dawn', size: '320x240' };
    const first = await client.images.generate(params, withKey(key)).withResponse();
    const retry = await client.images.generate(params, withKey(key)).withResponse();
    expect(retry.data).toEqual(first.data);
    expect(first.data.data![0]!.url?.startsWith(`${gw.url}/assets/`)).toBe(true);
    const taskId = first.response.headers.get('x-task-id');
    expect(taskId).toMatch(/^task_/);
    expect(retry.response.headers.get('x-task-id')).toBe(taskId);
    expect(await moneyOf(taskId!)).toEqual({ reserved: 1, settled: [STD_PRICE], released: 0 });
    // Without the key the same body is a new call, charged again.
    const fresh = await client.images.generate(params).withResponse();
    expect(fresh.response.headers.get('x-task-id')).not.toBe(taskId);
  });

  it('chat.completions (plain and streamed): the retry has the same id and content; the query by id answers the same completion', async () => {
    const key = newKey();
    const params = { model: 'std-image', messages: [{ role: 'user' as const, content: 'a red kite' }] };
    const first = await client.chat.completions.create(params, withKey(key));
    const retry = await client.chat.completions.create(params, withKey(key));
    expect(retry).toEqual(first);
    expect(first.choices[0]!.message.content).toMatch(/^!\[image 1\]\(http/);
    expect(await client.chat.completions.retrieve(first.id)).toEqual(first);
    expect(await moneyOf(first.id)).toEqual({ reserved: 1, settled: [STD_PRICE], released: 0 });

    const streamKey = newKey();
    const collect = async () => {
      const stream = await client.chat.completions.create({ ...params, stream: true }, withKey(streamKey));
      let content = '';
      let id = '';
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? '';
        id = chunk.id;
      }
      return { id, content };
    };
    const streamed = await collect();
    expect(streamed.content).toMatch(/^!\[image 1\]\(http/);
    expect(await collect()).toEqual(streamed);
    expect(await moneyOf(streamed.id)).toEqual({ reserved: 1, settled: [STD_PRICE], released: 0 });
  });

  it('images.generate streamed: the retry streams the same completed images (the partial images are not kept)', async () => {
    const key = newKey();
    const run = async () => {
      const { data: stream, response } = await client.images
        .generate({ model: 'pro-image', prompt: 'a glass owl', size: '1024x1024', stream: true }, withKey(key))
        .withResponse();
      const events: OpenAI.Images.ImageGenStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      return { taskId: response.headers.get('x-task-id'), events };
    };
    const first = await run();
    const retry = await run();
    expect(first.events.map((e) => e.type)).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    expect(retry.events).toEqual(first.events.slice(1));
    expect(retry.taskId).toBe(first.taskId);
    expect(await moneyOf(first.taskId!)).toEqual({ reserved: 1, settled: [40_000], released: 0 });
  });

  it('images.edit (picgen, multipart, b64_json): the retry and GET /v1/images/edits/{id} answer the same body', async () => {
    const key = newKey();
    const edit = async () =>
      client.images
        .edit(
          {
            model: 'vendor-picgen-4-0-250828',
            image: await toFile(TINY_PNG, 'a.png', { type: 'image/png' }),
            prompt: 'make it glow',
            size: '1K',
            response_format: 'b64_json',
          },
          withKey(key),
        )
        .withResponse();
    const first = await edit();
    const retry = await edit();
    expect(retry.data).toEqual(first.data);
    expect(pngSize(Buffer.from(first.data.data![0]!.b64_json!, 'base64'))).toEqual({ width: 1024, height: 1024 });
    const taskId = first.response.headers.get('x-task-id')!;
    const queried = await api.get(`/v1/images/edits/${taskId}`);
    expect(queried.status).toBe(200);
    expect(queried.body).toEqual(JSON.parse(JSON.stringify(first.data)));
    expect((await moneyOf(taskId)).reserved).toBe(1);
  });

  it('a client that aborts mid-call: the call still completes and settles once; the retry with the key and the query by id get its result', async () => {
    const key = newKey();
    const params = { model: 'std-image', prompt: 'a lighthouse in fog [sim:slow]', size: '320x240' };
    const before = await reservationCount();
    const aborter = new AbortController();
    const abandoned = client.images.generate(params, withKey(key, { signal: aborter.signal })).catch((e: unknown) => e);
    const taskId = await nextTask(before);
    aborter.abort();
    expect(await abandoned).toBeInstanceOf(OpenAI.APIUserAbortError);

    const retry = await client.images.generate(params, withKey(key)).withResponse();
    expect(retry.response.headers.get('x-task-id')).toBe(taskId);
    expect(pngSize(Buffer.from(await (await fetch(retry.data.data![0]!.url!)).arrayBuffer()))).toEqual({ width: 320, height: 240 });
    // A client that never saw the x-task-id header finds the id in its statement, newest first.
    const newest = await eventually(async () => {
      const item = (await session.get('/api/billing/ledger?size=1')).body.data.items[0];
      return item?.type === 'QuotaSettled' ? item : undefined;
    });
    expect(newest.task_id).toBe(taskId);
    const queried = await api.get(`/v1/images/generations/${taskId}`);
    expect(queried.status).toBe(200);
    expect(queried.body).toEqual(JSON.parse(JSON.stringify(retry.data)));
    expect(await moneyOf(taskId)).toEqual({ reserved: 1, settled: [STD_PRICE], released: 0 });
  });

  it('a retry while the first call still runs waits for it and answers the same result', async () => {
    const key = newKey();
    const params = { model: 'pro-image', prompt: 'a slow glass harbour [sim:slow]', size: '1024x1024', response_format: 'b64_json' as const };
    const before = await reservationCount();
    const first = client.images.generate(params, withKey(key)).withResponse();
    const taskId = await nextTask(before);
    const second = client.images.generate(params, withKey(key)).withResponse();
    const [a, b] = await Promise.all([first, second]);
    expect(b.data).toEqual(a.data);
    expect(a.data.data![0]!.b64_json).toBeTruthy();
    expect(b.response.headers.get('x-task-id')).toBe(taskId);
    const money = await moneyOf(taskId);
    expect(money.reserved).toBe(1);
    expect(money.settled).toHaveLength(1);
  });

  it('another body with the same key: 409 naming Idempotency-Key, nothing appended', async () => {
    const key = newKey();
    await client.images.generate({ model: 'std-image', prompt: 'a blue door' }, withKey(key));
    const head = await gw.gateway.deps.events.headPosition();
    const err = await client.images.generate({ model: 'std-image', prompt: 'a green door' }, withKey(key)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.ConflictError);
    const raw = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'a green door' }, { 'idempotency-key': key });
    expect(raw.status).toBe(409);
    expect(raw.body).toMatchObject({ code: 'idempotency_key_reused', message: expect.stringMatching(/^Idempotency-Key: /) });
    const empty = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'a green door' }, { 'idempotency-key': '' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^Idempotency-Key: /);
    expect(await gw.gateway.deps.events.headPosition()).toBe(head);
  });

  it('a failed call: the retry answers the same error, nothing charged, released once', async () => {
    const key = newKey();
    const body = { model: 'std-image', prompt: 'doomed [sim:fail]' };
    const first = await api.post('/v1/images/generations', body, { 'idempotency-key': key });
    const retry = await api.post('/v1/images/generations', body, { 'idempotency-key': key });
    expect(first.status).toBe(502);
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    const taskId = first.headers.get('x-task-id')!;
    expect(retry.headers.get('x-task-id')).toBe(taskId);
    const queried = await api.get(`/v1/images/generations/${taskId}`);
    expect([queried.status, queried.body]).toEqual([first.status, first.body]);
    expect(await moneyOf(taskId)).toEqual({ reserved: 1, settled: [], released: 1 });
  });
});

describe('a chat answer without an image (an upstream that answers text)', () => {
  it('the retry and the query by id answer the same text, charged nothing', async () => {
    const upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'up-1',
            choices: [{ index: 0, message: { role: 'assistant', content: 'I would rather not draw that.' } }],
            usage: { prompt_tokens: 7, completion_tokens: 8 },
          }),
        );
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    try {
      const { port } = upstream.address() as { port: number };
      const admin = await adminClient(gw);
      // Below the simulator's priority, so only a key bound to it reaches this channel.
      const channel = await admin.post('/api/channel/', {
        name: 'text only',
        family: 'images',
        base_url: `http://127.0.0.1:${port}`,
        key: 'k',
        models: ['std-image'],
        priority: -1,
      });
      expect(channel.status, JSON.stringify(channel.body)).toBe(200);
      const self = (await admin.get('/api/user/self')).body.data;
      await admin.post('/api/admin/credits', { user_id: self.id, amount: 1_000_000, note: 'text-only test' });
      const bound = await admin.post('/api/token/', { name: 'text only', unlimited_quota: true, channel_id: channel.body.data.id });
      expect(bound.status, JSON.stringify(bound.body)).toBe(200);
      const textClient = new OpenAI({ apiKey: bound.body.data.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const key = newKey();
      const params = { model: 'std-image', messages: [{ role: 'user' as const, content: 'something odd' }] };
      const first = await textClient.chat.completions.create(params, withKey(key));
      expect(first.choices[0]!.message.content).toBe('I would rather not draw that.');
      expect(await textClient.chat.completions.create(params, withKey(key))).toEqual(first);
      expect(await textClient.chat.completions.retrieve(first.id)).toEqual(first);
      const settled = (await accountEvents(gw, self.account_id)).filter((e) => e.type === 'QuotaSettled' && taskIdOf(e) === first.id);
      expect(settled.map((e) => (e.data as { charged: number }).charged)).toEqual([0]);
      await admin.delete(`/api/channel/${channel.body.data.id}`);
    } finally {
      upstream.close();
    }
  });
});

describe('the result by id: GET /v1/images/generations/{id}, /v1/images/edits/{id}, /v1/chat/completions/{id}', () => {
  it('answers the owner only; another account, another route or an unknown id is 404', async () => {
    const res = await client.images.generate({ model: 'std-image', prompt: 'an orchard' }).withResponse();
    const taskId = res.response.headers.get('x-task-id')!;
    const mine = await api.get(`/v1/images/generations/${taskId}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(JSON.parse(JSON.stringify(res.data)));
    const theirs = await other.get(`/v1/images/generations/${taskId}`);
    const missing = await other.get('/v1/images/generations/task_000000000000000000000000');
    expect(theirs.status).toBe(404);
    // Word for word the answer about an id that never existed.
    expect(JSON.stringify(theirs.body)).toBe(JSON.stringify(missing.body).replaceAll('task_000000000000000000000000', taskId));
    expect(theirs.body).toMatchObject({ code: 'task_not_exist' });
    expect((await api.get(`/v1/chat/completions/${taskId}`)).status).toBe(404);
    expect((await api.get(`/v1/images/edits/${taskId}`)).status).toBe(404);
    expect((await api.get('/v1/images/generations/not%20an%20id')).status).toBe(404);
  });

  it('a call still running is 409 task_in_progress with Retry-After, then its result', async () => {
    const before = await reservationCount();
    const call = client.images.generate({ model: 'std-image', prompt: 'a waterfall [sim:slow]' }).withResponse();
    const taskId = await nextTask(before);
    const early = await api.get(`/v1/images/generations/${taskId}`);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: 'task_in_progress' });
    expect(early.headers.get('retry-after')).toBe('2');
    const done = await call;
    expect((await api.get(`/v1/images/generations/${taskId}`)).body).toEqual(JSON.parse(JSON.stringify(done.data)));
  });

  it('after the retention period the query and the retry say the images expired (410), and nothing is charged again', async () => {
    const key = newKey();
    const params = { model: 'std-image', prompt: 'a sandcastle' };
    const res = await client.images.generate(params, withKey(key)).withResponse();
    const taskId = res.response.headers.get('x-task-id')!;
    clockOffsetMs += (RETENTION_SECONDS + 1) * 1000;
    const queried = await api.get(`/v1/images/generations/${taskId}`);
    expect(queried.status).toBe(410);
    expect(queried.body).toMatchObject({ code: 'result_expired', message: expect.stringMatching(/images were deleted at .*kept 7200 s/) });
    // The expirer deletes the files and records it; the answer stays the same.
    await eventually(async () => ((await gw.gateway.deps.events.readStream(`task-${taskId}`)).some((e) => e.type === 'AssetsExpired') ? true : undefined));
    const retry = await api.post('/v1/images/generations', params, { 'idempotency-key': key });
    expect(retry.status).toBe(410);
    expect(retry.body).toEqual(queried.body);
    expect(await moneyOf(taskId)).toEqual({ reserved: 1, settled: [STD_PRICE], released: 0 });
  });

  it('after every call the books balance and every reservation closed exactly once', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await expectBooksBalance(gw, accountId);
    await expectEachReservationClosedOnce(gw, accountId);
  });
});
