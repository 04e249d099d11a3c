import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, download, expectPng, getJson, manualClock, postJson, startSim, type SimServer } from './sim-server.js';

const SUBMIT = '/v1/images/async/generations';
const STEP = 1000;

const servers: SimServer[] = [];
async function sim(options: Parameters<typeof startSim>[0] = {}): Promise<SimServer> {
  const server = await startSim(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Item = { url?: string; b64_json?: string; revised_prompt?: string };

async function submit(server: SimServer, body: Record<string, unknown>): Promise<string> {
  const { status, json } = await postJson(`${server.base}${SUBMIT}`, body);
  expect(status).toBe(200);
  return String(json.id);
}

describe('async image upstream: submit and poll', () => {
  it('answers a submit with an image.task that is queued at 0% and whose id and task_id are the same sim_ id', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const { status, json } = await postJson(`${server.base}${SUBMIT}`, { model: 'anime-diffusion-4-5-full', prompt: 'a cat', n: 2 });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      object: 'image.task',
      model: 'anime-diffusion-4-5-full',
      status: 'queued',
      progress: '0%',
      created_at: Math.floor(clock.now() / 1000),
      data: [],
    });
    expect(json.id).toMatch(/^sim_[\w-]+\.[\w-]+$/);
    expect(json.task_id).toBe(json.id);
  });

  it('moves queued → 25% → 50% → 75% → completed one step at a time', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'a cat' });
    const seen: string[] = [];
    for (let step = 0; step <= 4; step++) {
      const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
      seen.push(`${String(json.status)} ${String(json.progress)}`);
      clock.advance(STEP);
    }
    expect(seen).toEqual(['queued 0%', 'in_progress 25%', 'in_progress 50%', 'in_progress 75%', 'completed 100%']);
  });

  it('completes with n url items whose files are real PNGs of the requested size, plus usage and expiry', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'a cat', n: 3, size: '640x480' });
    clock.advance(4 * STEP);
    const { status, json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'completed', progress: '100%', usage: { units: 3 }, completed_at: Math.floor(clock.now() / 1000) });
    expect(json.metadata).toEqual({ assetsExpireAt: Math.floor(clock.now() / 1000) + 7200 });
    const items = json.data as Item[];
    expect(items).toHaveLength(3);
    for (const [index, item] of items.entries()) {
      expect(item.b64_json).toBeUndefined();
      expect(item.url).toBe(`${server.base}/files/${id}/${index}.png`);
      const file = await download(item.url!);
      expect(file.status).toBe(200);
      expect(file.type).toBe('image/png');
      expect(expectPng(file.bytes)).toEqual({ width: 640, height: 480 });
    }
  });

  it('returns b64_json PNGs with a revised_prompt (markers stripped) and never a url for pro-image', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'pro-image', prompt: 'a red fox [sim:slow]', n: 2, size: '1536x1024' });
    clock.advance(20 * STEP);
    const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(json.status).toBe('completed');
    expect(json.metadata).toBeUndefined();
    const items = json.data as Item[];
    expect(items).toHaveLength(2);
    for (const item of items) {
      expect(item.url).toBeUndefined();
      expect(item.revised_prompt).toBe('a red fox');
      expect(expectPng(Buffer.from(item.b64_json!, 'base64'))).toEqual({ width: 1536, height: 1024 });
    }
  });

  it('turns an aspect-ratio size into pixels with the longer side 1024, and defaults to 1024x1024', async () => {
    const server = await sim({ stepMs: 0 });
    for (const [size, expected] of [
      ['16:9', { width: 1024, height: 576 }],
      ['9:16', { width: 576, height: 1024 }],
      [undefined, { width: 1024, height: 1024 }],
      ['9000x100', { width: 4096, height: 100 }],
    ] as const) {
      const id = await submit(server, { model: 'vis-imagine-1.0', prompt: 'p', ...(size ? { size } : {}) });
      const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
      const file = await download((json.data as Item[])[0]!.url!);
      expect(expectPng(file.bytes)).toEqual(expected);
    }
  });

  it('serves no file before the task completes, none past the returned count, and none after the 2-hour retention', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'a cat', n: 1 });
    const fileUrl = `${server.base}/files/${id}/0.png`;
    clock.advance(3 * STEP);
    expect((await download(fileUrl)).status).toBe(404);
    clock.advance(STEP);
    expect((await download(fileUrl)).status).toBe(200);
    expect((await download(`${server.base}/files/${id}/1.png`)).status).toBe(404);
    clock.advance(2 * 3600 * 1000);
    expect((await download(fileUrl)).status).toBe(404);
    const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(json).toMatchObject({ status: 'completed', data: [] });
  });

  it('finishes a task at once when stepMs is 0', async () => {
    const server = await sim({ stepMs: 0 });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'a cat' });
    const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(json).toMatchObject({ status: 'completed', progress: '100%' });
  });
});

describe('async image upstream: markers', () => {
  it('[sim:fail] ends the task failed with error upstream_failed at the completion step', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'a cat [SIM:FAIL]' });
    clock.advance(3 * STEP);
    expect((await getJson(`${server.base}${SUBMIT}/${id}`)).json).toMatchObject({ status: 'in_progress', progress: '75%' });
    clock.advance(STEP);
    const { status, json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'failed', data: [], error: { code: 'upstream_failed' }, completed_at: Math.floor(clock.now() / 1000) });
    expect(typeof (json.error as { message: unknown }).message).toBe('string');
    expect(json.usage).toBeUndefined();
  });

  it('[sim:reject] refuses the submit with HTTP 400 invalid_request', async () => {
    const server = await sim({ stepMs: 0 });
    const { status, json } = await postJson(`${server.base}${SUBMIT}`, { model: 'pro-image', prompt: '[sim:reject] x' });
    expect(status).toBe(400);
    expect(json).toEqual({ code: 'invalid_request', message: expect.any(String) });
  });

  it('[sim:5xx] answers the submit with HTTP 503 upstream_unavailable', async () => {
    const server = await sim({ stepMs: 0 });
    const { status, json } = await postJson(`${server.base}${SUBMIT}`, { model: 'pro-image', prompt: 'x [sim:5xx]' });
    expect(status).toBe(503);
    expect(json).toEqual({ code: 'upstream_unavailable', message: expect.any(String) });
  });

  it('[sim:slow] takes five times as many steps', async () => {
    const clock = manualClock();
    const server = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'slowly [sim:slow]' });
    clock.advance(4 * STEP);
    expect((await getJson(`${server.base}${SUBMIT}/${id}`)).json).toMatchObject({ status: 'in_progress', progress: '20%' });
    clock.advance(15 * STEP);
    expect((await getJson(`${server.base}${SUBMIT}/${id}`)).json).toMatchObject({ status: 'in_progress', progress: '95%' });
    clock.advance(STEP);
    expect((await getJson(`${server.base}${SUBMIT}/${id}`)).json).toMatchObject({ status: 'completed' });
  });

  it('[sim:partial] returns n-1 images when n > 1 and still one image when n = 1', async () => {
    const server = await sim({ stepMs: 0 });
    for (const [n, expected] of [
      [3, 2],
      [1, 1],
    ] as const) {
      const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'p [sim:partial]', n });
      const { json } = await getJson(`${server.base}${SUBMIT}/${id}`);
      expect((json.data as Item[]).length).toBe(expected);
      expect(json.usage).toEqual({ units: expected });
    }
  });

  it('[sim:4xx-poll] makes polling answer 404 task_not_exist (the upstream lost the task)', async () => {
    const server = await sim({ stepMs: 0 });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'p [sim:4xx-poll]' });
    const { status, json } = await getJson(`${server.base}${SUBMIT}/${id}`);
    expect(status).toBe(404);
    expect(json).toEqual({ code: 'task_not_exist', message: expect.any(String) });
  });

  it('also reads markers from an x-sim-markers header', async () => {
    const server = await sim({ stepMs: 0 });
    const { status } = await postJson(`${server.base}${SUBMIT}`, { model: 'pro-image', prompt: 'plain' }, { ...AUTH, 'x-sim-markers': '[sim:reject]' });
    expect(status).toBe(400);
  });
});

describe('async image upstream: ids, auth and requests', () => {
  it('answers 404 task_not_exist for a tampered, truncated, foreign-secret or made-up id', async () => {
    const server = await sim({ stepMs: 0 });
    const other = await sim({ stepMs: 0, secret: 'another-secret' });
    const id = await submit(server, { model: 'anime-diffusion-4-5-full', prompt: 'p', n: 1 });
    const [body, tag] = id.slice(4).split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...(JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>), n: 9 })).toString(
      'base64url',
    );
    const candidates = [`sim_${forged}.${tag}`, `${id}x`, id.slice(0, -1), 'sim_abc.def', 'task_123'];
    for (const bad of candidates) {
      const { status, json } = await getJson(`${server.base}${SUBMIT}/${bad}`);
      expect({ bad, status, code: json.code }).toEqual({ bad, status: 404, code: 'task_not_exist' });
      expect((await download(`${server.base}/files/${bad}/0.png`)).status).toBe(404);
    }
    expect((await getJson(`${other.base}${SUBMIT}/${id}`)).status).toBe(404);
  });

  it('refuses submit and poll without a Bearer key with 401', async () => {
    const server = await sim({ stepMs: 0 });
    const refused: Array<Record<string, string>> = [{}, { authorization: 'Bearer ' }, { authorization: 'Basic abc' }];
    for (const headers of refused) {
      const { status, json } = await postJson(`${server.base}${SUBMIT}`, { model: 'pro-image', prompt: 'p' }, headers);
      expect(status).toBe(401);
      expect(json).toEqual({ code: 'unauthorized', message: expect.any(String) });
    }
    const id = await submit(server, { model: 'pro-image', prompt: 'p' });
    expect((await getJson(`${server.base}${SUBMIT}/${id}`, {})).status).toBe(401);
  });

  it('rejects a submit without prompt, with a bad n or with malformed JSON as 400 invalid_request', async () => {
    const server = await sim({ stepMs: 0 });
    for (const body of [{ model: 'pro-image' }, { model: 'pro-image', prompt: 'p', n: 0 }, { prompt: 'p' }]) {
      const { status, json } = await postJson(`${server.base}${SUBMIT}`, body);
      expect(status).toBe(400);
      expect(json.code).toBe('invalid_request');
    }
    const res = await fetch(`${server.base}${SUBMIT}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{nope' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
  });

  it('keeps no state: a freshly started second instance answers the first one’s task id, files included', async () => {
    const clock = manualClock();
    const first = await sim({ stepMs: STEP, now: clock.now });
    const id = await submit(first, { model: 'anime-diffusion-4-5-full', prompt: 'p', n: 2, size: '320x200' });
    await first.close();
    servers.splice(servers.indexOf(first), 1);

    const second = await sim({ stepMs: 10 * STEP, now: clock.now });
    clock.advance(2 * STEP);
    expect((await getJson(`${second.base}${SUBMIT}/${id}`)).json).toMatchObject({ status: 'in_progress', progress: '50%' });
    clock.advance(2 * STEP);
    const { json } = await getJson(`${second.base}${SUBMIT}/${id}`);
    expect(json).toMatchObject({ id, status: 'completed', model: 'anime-diffusion-4-5-full' });
    const items = json.data as Item[];
    expect(items.map((i) => i.url)).toEqual([`${second.base}/files/${id}/0.png`, `${second.base}/files/${id}/1.png`]);
    expect(expectPng((await download(items[1]!.url!)).bytes)).toEqual({ width: 320, height: 200 });
  });

  it('answers unknown simulator paths with 404 {code, message}', async () => {
    const server = await sim({ stepMs: 0 });
    const { status, json } = await getJson(`${server.base}/v1/nothing-here`);
    expect(status).toBe(404);
    expect(json).toEqual({ code: 'not_found', message: expect.any(String) });
  });
});
