import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { Client } from '../../support/gateway.js';
import {
  moneyOf,
  mp4Info,
  nothingReserved,
  otherCaller,
  pollUntil,
  refusedWithoutAppend,
  startVideoWorld,
  submittedOf,
  type VideoWorld,
} from '../../support/videos.js';

let world: VideoWorld;
beforeAll(async () => {
  world = await startVideoWorld();
});
afterAll(() => world.gw.close());

const PATH = '/v1/videos';
const submit = (body: unknown) => world.api.post(PATH, body);
const finished = (body: any) => body.status === 'completed' || body.status === 'failed';
const waitFor = (id: string, api = world.api) => pollUntil(api, `${PATH}/${id}`, finished);
const FIRST = 'https://media.example.com/first.png';
const LAST = 'https://media.example.com/last.png';
const ref = (type: string, url = 'https://media.example.com/r') => ({ type, url });

async function content(id: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${world.gw.url}${PATH}/${id}/content`, { headers: { authorization: `Bearer ${world.key}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('Vid-H3: the four modes to completed, video from the content endpoint (spec 4.13, 2.4)', () => {
  const modes: [string, Record<string, unknown>, string, string][] = [
    ['text only', { prompt: 'a fox in snow' }, 'text', '16:9'],
    ['first frame (input_reference)', { prompt: 'animate', input_reference: FIRST }, 'first-frame', 'adaptive'],
    ['first frame (metadata)', { prompt: 'animate', metadata: { first_frame_image: FIRST } }, 'first-frame', 'adaptive'],
    ['first and last frame (images)', { prompt: 'morph', images: [FIRST, LAST] }, 'first-last-frame', 'adaptive'],
    [
      'first and last frame (metadata)',
      { prompt: 'morph', metadata: { first_frame_image: FIRST, last_frame_image: LAST, ratio: '1:1' } },
      'first-last-frame',
      '1:1',
    ],
    [
      'multi-reference',
      { metadata: { content: [ref('reference_image'), ref('reference_video'), ref('reference_audio'), { type: 'text', text: 'mix them' }] } },
      'multi-reference',
      'adaptive',
    ],
  ];

  it.each(modes)('%s', async (_name, fields, action, ratio) => {
    const r = await submit({ model: 'Vid-H3', seconds: 4, ...fields });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^task_/),
      object: 'video',
      model: 'Vid-H3',
      status: 'queued',
      progress: 0,
      created_at: expect.any(Number),
      completed_at: 0,
      expires_at: null,
      seconds: '4',
      size: '768P',
      error: null,
    });
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.action).toBe(action);
    expect(task.request.metadata.ratio).toBe(ratio);

    const done = await waitFor(r.body.id);
    expect(done).toMatchObject({ id: r.body.id, status: 'completed', progress: 100, seconds: '4', size: '768P', error: null });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.expires_at).toBeGreaterThan(done.completed_at);
    const file = await content(r.body.id);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(Number(file.headers.get('content-length'))).toBe(file.bytes.length);
    expect(mp4Info(file.bytes)).toEqual({ seconds: 4, width: 1366, height: 768 });
  });

  it('the multi-reference prompt becomes the text item, unless one is already there', async () => {
    const added = await submit({ model: 'Vid-H3', prompt: 'from prompt', metadata: { content: [ref('reference_image')] } });
    const kept = await submit({ model: 'Vid-H3', prompt: 'ignored', metadata: { content: [ref('reference_image'), { type: 'text', text: 'from content' }] } });
    expect((await submittedOf(world.gw, added.body.id)).request.metadata.content).toEqual([ref('reference_image'), { type: 'text', text: 'from prompt' }]);
    expect((await submittedOf(world.gw, kept.body.id)).request.metadata.content).toEqual([ref('reference_image'), { type: 'text', text: 'from content' }]);
    expect((await submittedOf(world.gw, kept.body.id)).request.prompt).toBeUndefined();
  });

  it('moves queued → in_progress → completed', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'slow [sim:slow]' });
    const seen: string[] = [];
    await pollUntil(world.api, `${PATH}/${r.body.id}`, (body) => {
      if (seen[seen.length - 1] !== body.status) seen.push(body.status);
      return finished(body);
    });
    expect(seen[seen.length - 1]).toBe('completed');
    expect(seen).toContain('in_progress');
    expect(seen.indexOf('in_progress')).toBeLessThan(seen.indexOf('completed'));
  });

  it('serves byte ranges of the video', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'ranges', metadata: { callback_url: 'https://hooks.example.com/v' } });
    expect((await submittedOf(world.gw, r.body.id)).callbackUrl).toBe('https://hooks.example.com/v');
    await waitFor(r.body.id);
    const whole = await content(r.body.id);
    const part = await content(r.body.id, { range: 'bytes=4-11' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 4-11/${whole.bytes.length}`);
    expect(part.headers.get('content-length')).toBe('8');
    expect(part.bytes.equals(whole.bytes.subarray(4, 12))).toBe(true);
    expect((await content(r.body.id, { range: `bytes=${whole.bytes.length + 10}-` })).status).toBe(416);
  });

  it('content before completion is 409 video_not_ready; of another account 404', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'not yet [sim:slow]' });
    const early = await content(r.body.id);
    expect(early.status).toBe(409);
    expect(JSON.parse(early.bytes.toString()).error.code).toBe('video_not_ready');
    const other = await otherCaller(world);
    expect((await other.api.get(`${PATH}/${r.body.id}/content`)).status).toBe(404);
    expect((await other.api.get(`${PATH}/${r.body.id}`)).body.error.code).toBe('task_not_exist');
  });
});

describe('Vid-H3: what spec 4.13 allows is accepted, and charged seconds × resolution', () => {
  it("audio references alongside the text alone (the audio-only rule is vidgen's)", async () => {
    const audio = [ref('reference_audio', 'https://media.example.com/a.mp3'), ref('reference_audio', 'https://media.example.com/b.mp3')];
    const r = await submit({ model: 'Vid-H3', prompt: 'a song made visible', seconds: 6, size: '2K', metadata: { content: audio } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.action).toBe('multi-reference');
    expect(task.request.metadata.content).toEqual([...audio, { type: 'text', text: 'a song made visible' }]);
    expect((await waitFor(r.body.id)).status).toBe('completed');
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(6 * 12_000);
    expect(money.settled).toMatchObject({ charged: 6 * 12_000, basis: { tier: '2K', units: 6 } });
  });

  it('an empty images array is text only', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'no frames', images: [] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await submittedOf(world.gw, r.body.id)).action).toBe('text');
    await waitFor(r.body.id);
    expect((await moneyOf(world.gw, world.accountId, r.body.id)).settled).toMatchObject({ charged: 5 * 5_000, basis: { tier: '768P', units: 5 } });
  });
});

describe('Vid-H3: the official openai client', () => {
  it('creates (multipart form), retrieves until completed and downloads the content', async () => {
    const client = new OpenAI({ apiKey: world.key, baseURL: `${world.gw.url}/v1`, maxRetries: 0 });
    const created = await client.videos.create({
      model: 'Vid-H3',
      prompt: 'a lighthouse at dusk',
      seconds: '8',
      size: '2K' as never,
      input_reference: { image_url: FIRST },
    });
    expect(created).toMatchObject({ object: 'video', model: 'Vid-H3', status: 'queued', seconds: '8', size: '2K' });
    let video = await client.videos.retrieve(created.id);
    for (let i = 0; i < 300 && video.status !== 'completed' && video.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 30));
      video = await client.videos.retrieve(created.id);
    }
    expect(video.status).toBe('completed');
    const response = await client.videos.downloadContent(created.id);
    expect(response.headers.get('content-type')).toBe('video/mp4');
    expect(mp4Info(Buffer.from(await response.arrayBuffer()))).toEqual({ seconds: 8, width: 2560, height: 1440 });
  });

  it('refusals surface as APIError with the field as param', async () => {
    const client = new OpenAI({ apiKey: world.key, baseURL: `${world.gw.url}/v1`, maxRetries: 0 });
    const error = await client.videos.create({ model: 'Vid-H3', prompt: 'x', size: '1280x720' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 400, param: 'size', code: 'invalid_request' });
    const missing = await client.videos.retrieve('task_doesnotexist000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('Vid-H3: refusals append nothing', () => {
  beforeAll(() => nothingReserved(world.gw, world.accountId));
  const refused: [string, unknown, string][] = [
    ['wrong model', { model: 'Vid-H2', prompt: 'x' }, 'model'],
    ['no text at all', { model: 'Vid-H3' }, 'prompt'],
    ['blank prompt', { model: 'Vid-H3', prompt: '  ' }, 'prompt'],
    ['seconds 3', { model: 'Vid-H3', prompt: 'x', seconds: 3 }, 'seconds'],
    ['seconds 16', { model: 'Vid-H3', prompt: 'x', seconds: '16' }, 'seconds'],
    ['pixel size', { model: 'Vid-H3', prompt: 'x', size: '1280x720' }, 'size'],
    ['pixel resolution', { model: 'Vid-H3', prompt: 'x', resolution: '1920*1080' }, 'resolution'],
    ['unknown resolution', { model: 'Vid-H3', prompt: 'x', metadata: { resolution: '1080P' } }, 'metadata.resolution'],
    ['conflicting resolutions', { model: 'Vid-H3', prompt: 'x', size: '768P', resolution: '2K' }, 'resolution'],
    ['three images', { model: 'Vid-H3', prompt: 'x', images: [FIRST, LAST, FIRST] }, 'images'],
    ['image not a URL', { model: 'Vid-H3', prompt: 'x', image: 'not a url' }, 'image'],
    ['two different first frames', { model: 'Vid-H3', prompt: 'x', image: FIRST, input_reference: LAST }, 'image'],
    ['last frame alone', { model: 'Vid-H3', prompt: 'x', metadata: { last_frame_image: LAST } }, 'metadata.last_frame_image'],
    ['frames mixed with references', { model: 'Vid-H3', prompt: 'x', image: FIRST, metadata: { content: [ref('reference_image')] } }, 'metadata.content'],
    ['bad ratio', { model: 'Vid-H3', prompt: 'x', metadata: { ratio: '2:1' } }, 'metadata.ratio'],
    ['unknown metadata key', { model: 'Vid-H3', prompt: 'x', metadata: { fps: 30 } }, 'metadata.fps'],
    ['bad content type', { model: 'Vid-H3', prompt: 'x', metadata: { content: [ref('image_url')] } }, 'metadata.content.0.type'],
    [
      '10 reference images',
      { model: 'Vid-H3', prompt: 'x', metadata: { content: Array.from({ length: 10 }, () => ref('reference_image')) } },
      'metadata.content',
    ],
    [
      '4 reference videos',
      { model: 'Vid-H3', prompt: 'x', metadata: { content: Array.from({ length: 4 }, () => ref('reference_video')) } },
      'metadata.content',
    ],
    [
      '4 reference audio',
      { model: 'Vid-H3', prompt: 'x', metadata: { content: [ref('reference_image'), ...Array.from({ length: 4 }, () => ref('reference_audio'))] } },
      'metadata.content',
    ],
    [
      'two text items',
      {
        model: 'Vid-H3',
        metadata: {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      },
      'metadata.content',
    ],
    ['blank text item', { model: 'Vid-H3', prompt: 'x', metadata: { content: [{ type: 'text', text: ' ' }] } }, 'metadata.content.0.text'],
    ['two different last frames', { model: 'Vid-H3', prompt: 'x', images: [FIRST, LAST], metadata: { last_frame_image: FIRST } }, 'images'],
    ['input_reference object without a URL', { model: 'Vid-H3', prompt: 'x', input_reference: { file_id: 'file_1' } }, 'input_reference.image_url'],
    ['callback not a URL', { model: 'Vid-H3', prompt: 'x', metadata: { callback_url: 'hooks' } }, 'metadata.callback_url'],
    ['watermark not boolean', { model: 'Vid-H3', prompt: 'x', metadata: { aigc_watermark: 'yes' } }, 'metadata.aigc_watermark'],
  ];

  it.each(refused)('%s → 400 naming %s', async (_name, body, param) => {
    const r = await refusedWithoutAppend(world.gw, () => submit(body));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param, code: 'invalid_request', type: 'invalid_request_error' });
    expect(r.body.error.message.startsWith(`${param}: `), r.body.error.message).toBe(true);
  });

  it('an uploaded file as input_reference is refused (URLs only)', async () => {
    const form = new FormData();
    form.append('model', 'Vid-H3');
    form.append('prompt', 'x');
    form.append('input_reference', new Blob([Buffer.from('png')], { type: 'image/png' }), 'frame.png');
    const r = await refusedWithoutAppend(world.gw, async () => {
      const res = await fetch(`${world.gw.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${world.key}` }, body: form });
      return { status: res.status, body: await res.json(), headers: res.headers };
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('input_reference');
  });

  it('a form part declared application/json carries an object (metadata as OpenAPI encodes it); a malformed one is refused', async () => {
    // Written by hand: FormData gives every Blob a filename, which would make the part a file.
    const post = async (metadata: string) => {
      const boundary = 'b0undary';
      const part = (name: string, value: string, type?: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n${value}\r\n`;
      const body = `${part('model', 'Vid-H3')}${part('seconds', '4')}${part('metadata', metadata, 'application/json')}--${boundary}--\r\n`;
      const res = await fetch(`${world.gw.url}${PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    };
    const r = await post(JSON.stringify({ content: [ref('reference_image'), { type: 'text', text: 'json part' }], ratio: '1:1' }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.action).toBe('multi-reference');
    expect(task.request.metadata.ratio).toBe('1:1');
    expect((await waitFor(r.body.id)).status).toBe('completed');
    const bad = await refusedWithoutAppend(world.gw, () => post('{"content": ['));
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it('a plain form key repeated is a list (images twice: first and last frame); images once is a list of one', async () => {
    const form = new FormData();
    form.append('model', 'Vid-H3');
    form.append('prompt', 'morph');
    form.append('images', FIRST);
    form.append('images', LAST);
    const res = await fetch(`${world.gw.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${world.key}` }, body: form });
    expect(res.status, await res.clone().text()).toBe(200);
    const task = await submittedOf(world.gw, ((await res.json()) as { id: string }).id);
    expect(task.action).toBe('first-last-frame');
    const once = new FormData();
    once.append('model', 'Vid-H3');
    once.append('prompt', 'animate');
    once.append('images', FIRST);
    const one = await fetch(`${world.gw.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${world.key}` }, body: once });
    expect(one.status, await one.clone().text()).toBe(200);
    expect((await submittedOf(world.gw, ((await one.json()) as { id: string }).id)).action).toBe('first-frame');
  });

  it('no key → 401', async () => {
    const r = await refusedWithoutAppend(world.gw, () => new Client(world.gw.url).post(PATH, { model: 'Vid-H3', prompt: 'x' }));
    expect(r.status).toBe(401);
  });
});

describe('Vid-H3: billing on the delivery', () => {
  it('a lower resolution delivered returns the difference', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'cheaper [sim:res=768P]', seconds: 6, size: '2K' });
    const done = await waitFor(r.body.id);
    expect(done.size).toBe('768P');
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(6 * 12_000);
    expect(money.settled).toMatchObject({ actual: 6 * 5_000, charged: 6 * 5_000, basis: { tier: '768P' } });
  });

  it('a higher resolution delivered costs more; seconds beyond those asked for are not charged', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'richer [sim:res=2K] [sim:dur=10]', seconds: 5, resolution: '768p' });
    const done = await waitFor(r.body.id);
    expect(done).toMatchObject({ size: '2K', seconds: '10' });
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(5 * 5_000);
    expect(money.settled).toMatchObject({ actual: 5 * 12_000, charged: 5 * 12_000, basis: { tier: '2K', units: 5 }, deliveredUnits: 10 });
  });

  it('a failed video has an error object and is not charged', async () => {
    const r = await submit({ model: 'Vid-H3', prompt: 'doomed [sim:fail]' });
    const done = await waitFor(r.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'upstream_failed', message: expect.any(String) } });
    expect((await content(r.body.id)).status).toBe(409);
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.released).toBe(money.reserved);
    expect(money.settled).toBeUndefined();
  });

  it('after every task ends the books balance', async () => {
    await nothingReserved(world.gw, world.accountId);
    await expectBooksBalance(world.gw, world.accountId);
    expect(await expectEachReservationClosedOnce(world.gw, world.accountId)).toBeGreaterThan(8);
  });
});
