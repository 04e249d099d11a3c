/**
 * Synchronous std-image / pro-image, black-box over HTTP (spec 4.5, 4.6, 2.2, 6.1): answers,
 * streaming frames, and the books — every call reserved and settled by the images returned,
 * failures released, a client that goes away still settled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { eventually, startGateway, type Client, type TestGateway } from '../../support/gateway.js';
import { FAST_ENGINE, pngSize } from '../../support/images.js';
import { accountEvents, lastCall, syncUser, TINY_PNG_URI } from '../../support/sync-images.js';
import { plainError } from '../../support/errors.js';

let gw: TestGateway;
let api: Client;
let admin: Client;
let session: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  ({ api, accountId, admin, session } = await syncUser(gw));
});
afterAll(() => gw.close());

const chat = (body: unknown, headers?: Record<string, string>) => api.post('/v1/chat/completions', body, headers);
const images = (body: unknown) => api.post('/v1/images/generations', body);

async function fetchBytes(url: string) {
  const res = await fetch(url);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

function linksOf(content: string): string[] {
  return [...content.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]!);
}

/** Frames of a text/event-stream body. */
function framesOf(text: string): Array<{ event?: string; data: string }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return event ? { event, data } : { data };
    });
}

async function postRaw(path: string, body: unknown) {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('chat-style (spec 4.5): POST /v1/chat/completions', () => {
  it('answers the chat.completion of 2.2 with Markdown links to re-hosted gateway assets', async () => {
    const r = await chat({ model: 'std-image', messages: [{ role: 'user', content: 'a red kite' }], size: '512x256', n: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ object: 'chat.completion', model: 'std-image', created: expect.any(Number) });
    expect(r.body.id).toMatch(/^task_/);
    expect(r.body.choices).toHaveLength(1);
    expect(r.body.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant' } });
    const links = linksOf(r.body.choices[0].message.content);
    expect(links).toHaveLength(2);
    for (const link of links) {
      expect(link.startsWith(`${gw.url}/assets/`)).toBe(true);
      const file = await fetchBytes(link);
      expect(file.status).toBe(200);
      expect(pngSize(file.bytes)).toEqual({ width: 512, height: 256 });
    }
    const { prompt_tokens, completion_tokens, total_tokens } = r.body.usage;
    expect(prompt_tokens).toBeGreaterThan(0);
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);

    const call = await lastCall(gw, accountId);
    expect(call.submitted).toMatchObject({ family: 'sync-image', action: 'chat/generate', sync: true });
    expect(call.reserved.amount).toBe(2 * 20_000);
    expect(call.settled).toMatchObject({ charged: 2 * 20_000, basis: { units: 2 } });
    expect(call.task.map((e) => e.type)).toEqual(['TaskSubmitted', 'TaskSucceeded']);
  });

  it('image-to-image from an image_url part (URL or Base64 data URI); the recorded request keeps no Base64', async () => {
    const r = await chat({
      model: 'pro-image',
      messages: [
        { role: 'system', content: 'you draw' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'make it blue' },
            { type: 'image_url', image_url: { url: TINY_PNG_URI } },
            { type: 'image_url', image_url: 'https://example.com/ref.png' },
          ],
        },
      ],
      quality: 'high',
      background: 'transparent',
      output_format: 'webp',
      moderation: 'low',
      user: 'end-user-7',
      unknown_field: 'dropped',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const call = await lastCall(gw, accountId);
    expect(call.submitted.action).toBe('chat/edit');
    const recorded = call.submitted.request;
    expect(JSON.stringify(recorded)).not.toContain(TINY_PNG_URI.slice(30));
    expect(recorded).toMatchObject({
      model: 'pro-image',
      n: 1,
      quality: 'high',
      background: 'transparent',
      output_format: 'webp',
      moderation: 'low',
      user: 'end-user-7',
    });
    expect(recorded).not.toHaveProperty('unknown_field');
    expect(r.body.usage.prompt_tokens).toBeGreaterThan(256);
  });

  it('stream: true answers chat-completion chunks ending in [DONE], with usage in the last chunk', async () => {
    const r = await postRaw('/v1/chat/completions', { model: 'std-image', stream: true, messages: [{ role: 'user', content: 'a kite' }] });
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/event-stream/);
    const frames = framesOf(r.text);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    for (const c of chunks) expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'std-image', id: expect.stringMatching(/^task_/) });
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(linksOf(content)).toHaveLength(1);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
    expect((await lastCall(gw, accountId)).settled?.basis.units).toBe(1);
  });

  it('errors are {code, message}: a bad request before anything is reserved', async () => {
    const r = await chat({ model: 'std-image', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.example/a.png' } }] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(plainError('invalid_request', expect.stringMatching(/^messages\.0\.content: /)));
  });

  it('a streamed call the upstream refuses answers a plain {code, message} error (nothing was streamed yet) and releases', async () => {
    const r = await postRaw('/v1/chat/completions', { model: 'std-image', stream: true, messages: [{ role: 'user', content: 'no [sim:reject]' }] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual(plainError('upstream_rejected'));
    expect((await lastCall(gw, accountId)).released).toBeDefined();
  });
});

describe('images-style (spec 4.6): POST /v1/images/generations for std-image / pro-image', () => {
  it('std-image answers url items with revised_prompt and the token usage of 2.2', async () => {
    const r = await images({ model: 'std-image', prompt: 'a green door', n: 3, size: '256x256', style: 'vivid' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.created).toEqual(expect.any(Number));
    expect(r.body.data).toHaveLength(3);
    for (const item of r.body.data) {
      expect(item.revised_prompt).toBe('a green door');
      expect(item.b64_json).toBeUndefined();
      expect(pngSize((await fetchBytes(item.url)).bytes)).toEqual({ width: 256, height: 256 });
    }
    expect(r.body.usage).toEqual({
      total_tokens: expect.any(Number),
      input_tokens: 3,
      output_tokens: expect.any(Number),
      input_tokens_details: { text_tokens: 3, image_tokens: 0 },
    });
    const call = await lastCall(gw, accountId);
    expect(call.submitted.request).toMatchObject({ style: 'vivid', n: 3, size: '256x256' });
    expect(call.settled).toMatchObject({ charged: 3 * 20_000 });
  });

  it('pro-image answers b64_json by default; response_format url gives gateway URLs', async () => {
    const b64 = await images({ model: 'pro-image', prompt: 'a moth', size: '128x64' });
    expect(b64.status).toBe(200);
    expect(b64.body.data[0].url).toBeUndefined();
    expect(pngSize(Buffer.from(b64.body.data[0].b64_json, 'base64'))).toEqual({ width: 128, height: 64 });
    const url = await images({ model: 'pro-image', prompt: 'a moth', response_format: 'url' });
    expect(url.body.data[0].url.startsWith(`${gw.url}/assets/`)).toBe(true);
  });

  it('stream: true answers partial_image and completed events (b64_json, size, quality, background, output_format, usage)', async () => {
    const r = await postRaw('/v1/images/generations', { model: 'pro-image', prompt: 'a boat', stream: true, size: '1024x1536', quality: 'low', n: 2 });
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/event-stream/);
    const frames = framesOf(r.text);
    const events = frames.map((f) => ({ name: f.event, body: JSON.parse(f.data) }));
    expect(events.map((e) => e.name)).toEqual([
      'image_generation.partial_image',
      'image_generation.partial_image',
      'image_generation.completed',
      'image_generation.completed',
    ]);
    for (const e of events) {
      expect(e.body).toMatchObject({
        type: e.name,
        created_at: expect.any(Number),
        size: '1024x1536',
        quality: 'low',
        background: 'auto',
        output_format: 'png',
        b64_json: expect.any(String),
      });
    }
    expect(events[0]!.body.partial_image_index).toBe(0);
    expect(pngSize(Buffer.from(events[2]!.body.b64_json, 'base64'))).toEqual({ width: 1024, height: 1536 });
    const usages = events.slice(2).map((e) => e.body.usage);
    expect(usages[0].input_tokens).toBeGreaterThan(0);
    expect(usages[1].input_tokens).toBe(0);
    expect((await lastCall(gw, accountId)).settled).toMatchObject({ charged: 2 * 40_000, basis: { units: 2 } });
  });

  it('an upstream failure after partial images ends the stream with an error frame, and the reservation is released', async () => {
    const r = await postRaw('/v1/images/generations', { model: 'std-image', prompt: 'doomed [sim:fail]', stream: true });
    expect(r.status).toBe(200);
    const frames = framesOf(r.text);
    expect(frames[0]!.event).toBe('image_generation.partial_image');
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toEqual({ error: { code: 'upstream_error', message: expect.stringContaining('simulated generation failure') } });
    const call = await lastCall(gw, accountId);
    expect(call.released).toBeDefined();
    expect(call.settled).toBeUndefined();
  });

  it.each([
    ['[sim:reject]', 400, 'upstream_rejected'],
    ['[sim:fail]', 502, 'upstream_error'],
  ])('%s: HTTP %i {code: %s}; released, nothing charged', async (marker, status, code) => {
    const r = await images({ model: 'std-image', prompt: `p ${marker}` });
    expect(r.status).toBe(status);
    expect(r.body).toEqual(plainError(code, expect.any(String), '', status >= 500 ? 'server_error' : 'invalid_request_error'));
    const call = await lastCall(gw, accountId);
    expect(call.closing.map((e) => e.type)).toEqual(['QuotaReleased']);
    expect(call.task.map((e) => e.type)).toEqual(['TaskSubmitted', 'UpstreamSubmitFailed', 'TaskFailed']);
  });

  it('[sim:partial] settles on the images returned, not the images asked for', async () => {
    const r = await images({ model: 'std-image', prompt: 'fewer [sim:partial]', n: 3 });
    expect(r.body.data).toHaveLength(2);
    const call = await lastCall(gw, accountId);
    expect(call.reserved.amount).toBe(3 * 20_000);
    expect(call.settled).toMatchObject({ charged: 2 * 20_000, basis: { units: 2 } });
  });

  it('a channel that is down fails over to the next one within the same call', async () => {
    const down = await admin.post('/api/channel/', {
      name: 'down',
      family: 'images',
      base_url: '/_sim',
      key: 'broken [sim:5xx]',
      models: ['std-image'],
      priority: 100,
    });
    expect(down.status).toBe(200);
    try {
      const r = await images({ model: 'std-image', prompt: 'fail over' });
      expect(r.status).toBe(200);
      const call = await lastCall(gw, accountId);
      expect(call.task.map((e) => e.type)).toEqual(['TaskSubmitted', 'UpstreamSubmitFailed', 'TaskSucceeded']);
    } finally {
      await admin.delete(`/api/channel/${down.body.data.id}`);
    }
  });

  it('refuses image / images on this endpoint, and an unknown model naming the field', async () => {
    for (const [body, field] of [
      [{ model: 'std-image', prompt: 'x', image: 'https://a.example/1.png' }, 'image'],
      [{ model: 'dall-e-9', prompt: 'x' }, 'model'],
      [{ model: 'std-image', prompt: 'x', style: 7 }, 'style'],
      [{ model: 'std-image', prompt: 'x', stream: 'yes' }, 'stream'],
    ] as const) {
      const r = await images(body);
      expect(r.status).toBe(400);
      expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    }
  });
});

describe('sync billing', () => {
  it('the ledger (GET /api/billing/ledger) shows each sync call reserved on n and settled on the images returned', async () => {
    for (const [body, reserved, settled] of [
      [{ model: 'std-image', messages: [{ role: 'user', content: 'three asked, two back [sim:partial]' }], n: 3 }, 3, 2],
      [{ model: 'pro-image', messages: [{ role: 'user', content: 'one' }] }, 1, 1],
    ] as const) {
      const r = await chat(body);
      expect(r.status).toBe(200);
      await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
      const ledger = await session.get(`/api/billing/ledger?task_id=${r.body.id}`);
      const items: Array<{ type: string; basis: { units: number; unit: string } }> = ledger.body.data.items;
      expect(items.map((i) => i.type).sort()).toEqual(['QuotaReserved', 'QuotaSettled']);
      expect(items.find((i) => i.type === 'QuotaReserved')!.basis).toMatchObject({ unit: 'image', units: reserved });
      expect(items.find((i) => i.type === 'QuotaSettled')!.basis).toMatchObject({ unit: 'image', units: settled });
    }
  });

  it('the ledger shows a failed sync call reserved and released', async () => {
    const r = await chat({ model: 'std-image', messages: [{ role: 'user', content: 'x [sim:fail]' }] });
    expect(r.status).toBe(502);
    const { taskId } = await lastCall(gw, accountId);
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    const ledger = await session.get(`/api/billing/ledger?task_id=${taskId}`);
    expect(ledger.body.data.items.map((i: { type: string }) => i.type).sort()).toEqual(['QuotaReleased', 'QuotaReserved']);
  });

  it('a client that disconnects mid-call is still settled', async () => {
    const before = (await accountEvents(gw, accountId)).length;
    const controller = new AbortController();
    const pending = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'std-image', prompt: 'slow one [sim:slow]' }),
      signal: controller.signal,
    });
    await eventually(async () => ((await accountEvents(gw, accountId)).slice(before).some((e) => e.type === 'QuotaReserved') ? true : undefined));
    controller.abort();
    await expect(pending).rejects.toThrow();
    const settled = await eventually(async () => (await accountEvents(gw, accountId)).slice(before).find((e) => e.type === 'QuotaSettled'));
    expect((settled.data as { charged: number }).charged).toBe(20_000);
  });

  it('a streamed call whose client disconnects mid-stream is still settled', async () => {
    const before = (await accountEvents(gw, accountId)).length;
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pro-image', prompt: 'slow stream [sim:slow]', stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first partial image
    controller.abort();
    const settled = await eventually(async () => (await accountEvents(gw, accountId)).slice(before).find((e) => e.type === 'QuotaSettled'));
    expect((settled.data as { charged: number }).charged).toBe(40_000);
  });

  it('after every call the books balance and every reservation closed exactly once', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const { charged } = await expectBooksBalance(gw, accountId);
    expect(charged).toBeGreaterThan(0);
    expect(await expectEachReservationClosedOnce(gw, accountId)).toBeGreaterThan(10);
  });
});
