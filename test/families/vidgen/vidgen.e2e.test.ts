import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vidgenModels } from '../../../src/families/vidgen/catalog.js';
import { Client } from '../../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import {
  download,
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

const PATH = '/v1/video/generations';
const submit = (body: unknown) => world.api.post(PATH, body);
const finished = (body: any) => body.data?.status === 'SUCCESS' || body.data?.status === 'FAILURE';
const waitFor = (id: string) => pollUntil(world.api, `${PATH}/${id}`, finished);
const URL_A = 'https://media.example.com/a.png';
const VIDEO = 'https://media.example.com/v.mp4';
const AUDIO = 'https://media.example.com/a.mp3';

describe('vidgen: every model to SUCCESS with a downloadable video (spec 4.3, 4.4, 2.3)', () => {
  it.each(vidgenModels)('%s', async (model) => {
    const r = await submit({ model, prompt: 'a paper boat on a river', seconds: 4 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^task_/),
      task_id: r.body.id,
      object: 'video',
      model,
      status: 'queued',
      progress: 0,
      created_at: expect.any(Number),
    });

    const done = await waitFor(r.body.id);
    expect(done).toMatchObject({ code: 'success', message: expect.any(String) });
    const data = done.data;
    expect(Number.isInteger(data.id)).toBe(true);
    expect(data).toMatchObject({
      task_id: r.body.id,
      platform: 'vidgen',
      status: 'SUCCESS',
      progress: '100%',
      fail_reason: '',
      submit_time: r.body.created_at,
    });
    expect(data.finish_time).toBeGreaterThanOrEqual(data.submit_time);
    expect(data.data).toMatchObject({ status: 'succeeded', duration: 4, resolution: '720p', content: { video_url: expect.any(String) } });
    expect(data.result_url).toContain('/assets/');
    const file = await download(data.result_url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(Number(file.headers.get('content-length'))).toBe(file.bytes.length);
    expect(mp4Info(file.bytes)).toEqual({ seconds: 4, width: 1280, height: 720 });
  });

  it('data.id is the increasing position of the submit', async () => {
    const a = await submit({ model: vidgenModels[0], prompt: 'first' });
    const b = await submit({ model: vidgenModels[0], prompt: 'second' });
    const [qa, qb] = await Promise.all([world.api.get(`${PATH}/${a.body.id}`), world.api.get(`${PATH}/${b.body.id}`)]);
    expect(qb.body.data.id).toBeGreaterThan(qa.body.data.id);
  });

  it('a slow task is NOT_START or IN_PROGRESS before SUCCESS', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-5-260628', prompt: 'slow [sim:slow]' });
    const seen = new Set<string>();
    const done = await pollUntil(world.api, `${PATH}/${r.body.id}`, (body) => {
      seen.add(body.data.status);
      return finished(body);
    });
    expect(done.data.status).toBe('SUCCESS');
    expect(seen.has('IN_PROGRESS')).toBe(true);
    expect(done.data.start_time).toBeGreaterThan(0);
  });

  it('metadata keys reach the upstream; callback_url stays with the gateway', async () => {
    const metadata = {
      resolution: '480P',
      ratio: '16:9',
      seed: 7,
      watermark: false,
      camera_fixed: true,
      callback_url: 'https://hooks.example.com/done',
      content: [{ type: 'image_url', role: 'first_frame', image_url: { url: URL_A } }],
    };
    const r = await submit({ model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', seconds: '6', metadata });
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.callbackUrl).toBe('https://hooks.example.com/done');
    expect(task.action).toBe('image2video');
    expect(task.request).toEqual({
      model: 'vendor-vidgen-1-0-pro-250528',
      prompt: 'x',
      seconds: 6,
      metadata: { resolution: '480p', ratio: '16:9', seed: 7, watermark: false, camera_fixed: true, content: metadata.content },
    });
    expect((await waitFor(r.body.id)).data.data).toMatchObject({ resolution: '480p', duration: 6 });
  });

  it('reference video and audio work on the 2.x models', async () => {
    const content = [
      { type: 'image_url', role: 'reference_image', image_url: { url: URL_A } },
      { type: 'video_url', role: 'reference_video', video_url: { url: VIDEO } },
      { type: 'audio_url', role: 'reference_audio', audio_url: { url: AUDIO } },
    ];
    const r = await submit({ model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { content } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await submittedOf(world.gw, r.body.id)).action).toBe('reference2video');
  });
});

describe('vidgen: what spec 4.3 allows is accepted, and charged seconds × resolution', () => {
  const img = (role: string) => ({ type: 'image_url', role, image_url: { url: URL_A } });
  const audio = { type: 'audio_url', role: 'reference_audio', audio_url: { url: AUDIO } };
  const oneX = vidgenModels.filter((m) => /-1-[05]-/.test(m));

  it.each(oneX)('reference_image and audio items on the 1.x model %s', async (model) => {
    const content = [img('reference_image'), audio];
    const r = await submit({ model, prompt: 'referenced', seconds: 3, metadata: { resolution: '480p', content } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.action).toBe('reference2video');
    expect(task.request.metadata.content).toEqual(content);
    expect((await waitFor(r.body.id)).data.status).toBe('SUCCESS');
    const audioExtra = model === 'vendor-vidgen-1-5-pro-251215' ? 10_000 : 0;
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(3 * 2_000 + audioExtra);
    expect(money.settled).toMatchObject({ basis: { tier: '480p', units: 3 } });
    expect(money.settled!.charged).toBe(money.reserved);
  });

  it('frames mixed with reference media go upstream as given', async () => {
    const content = [
      img('first_frame'),
      img('last_frame'),
      img('reference_image'),
      { type: 'video_url', role: 'reference_video', video_url: { url: VIDEO } },
      audio,
    ];
    const r = await submit({ model: 'vendor-vidgen-2-0-260128', prompt: 'mixed', seconds: 4, metadata: { resolution: '720p', content } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.id);
    expect(task.action).toBe('image2video');
    expect(task.request.metadata.content).toEqual(content);
    expect((await waitFor(r.body.id)).data.status).toBe('SUCCESS');
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(4 * 4_000);
    expect(money.settled).toMatchObject({ charged: 4 * 4_000, basis: { tier: '720p', units: 4 } });
  });

  it('metadata.frames longer than seconds is reserved in full; the delivery is charged', async () => {
    // 241 frames at 24 per second are 10 s; the simulator renders the 2 s of `seconds`.
    const r = await submit({ model: 'vendor-vidgen-2-5-260628', prompt: 'frames', seconds: 2, metadata: { resolution: '480p', frames: 241 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await waitFor(r.body.id);
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.basis).toMatchObject({ units: 10, tier: '480p' });
    expect(money.reserved).toBe(10 * 2_000);
    expect(money.settled).toMatchObject({ charged: 2 * 2_000, basis: { units: 2 } });
  });
});

describe('vidgen: refusals append nothing and answer the OpenAI error body', () => {
  // Tasks of the tests above still running would move the head.
  beforeAll(() => nothingReserved(world.gw, world.accountId));
  const img = (role: string) => ({ type: 'image_url', role, image_url: { url: URL_A } });
  const video = { type: 'video_url', role: 'reference_video', video_url: { url: VIDEO } };
  const audio = { type: 'audio_url', role: 'reference_audio', audio_url: { url: AUDIO } };
  const m2 = 'vendor-vidgen-2-0-260128';
  const refused: [string, unknown, string][] = [
    ['no model', { prompt: 'x' }, 'model'],
    ['unknown model', { model: 'vendor-vidgen-9', prompt: 'x' }, 'model'],
    ['no prompt', { model: m2 }, 'prompt'],
    ['blank prompt', { model: m2, prompt: ' ' }, 'prompt'],
    ['seconds above 3600', { model: m2, prompt: 'x', seconds: 3601 }, 'seconds'],
    ['seconds negative', { model: m2, prompt: 'x', seconds: -1 }, 'seconds'],
    ['seconds decimal string', { model: m2, prompt: 'x', seconds: '5.5' }, 'seconds'],
    ['seconds not numeric', { model: m2, prompt: 'x', seconds: 'five' }, 'seconds'],
    ['metadata not an object', { model: m2, prompt: 'x', metadata: 'hd' }, 'metadata'],
    ['unknown metadata key', { model: m2, prompt: 'x', metadata: { fps: 24 } }, 'metadata.fps'],
    ['1080p on 2-0-mini', { model: 'vendor-vidgen-2-0-mini-260615', prompt: 'x', metadata: { resolution: '1080p' } }, 'metadata.resolution'],
    ['4k on 2-0-fast', { model: 'vendor-vidgen-2-0-fast-260128', prompt: 'x', metadata: { resolution: '4k' } }, 'metadata.resolution'],
    ['4k on 2-5', { model: 'vendor-vidgen-2-5-260628', prompt: 'x', metadata: { resolution: '4k' } }, 'metadata.resolution'],
    ['4k on 1-0-pro', { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', metadata: { resolution: '4k' } }, 'metadata.resolution'],
    ['generate_audio not boolean', { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { generate_audio: 'yes' } }, 'metadata.generate_audio'],
    ['callback_url not http', { model: m2, prompt: 'x', metadata: { callback_url: 'ftp://hooks.example.com' } }, 'metadata.callback_url'],
    ['content not an array', { model: m2, prompt: 'x', metadata: { content: {} } }, 'metadata.content'],
    ['content item bad type', { model: m2, prompt: 'x', metadata: { content: [{ type: 'text', role: 'x' }] } }, 'metadata.content.0.type'],
    ['image with a video role', { model: m2, prompt: 'x', metadata: { content: [img('reference_video')] } }, 'metadata.content.0.role'],
    [
      'image url not http',
      { model: m2, prompt: 'x', metadata: { content: [{ type: 'image_url', role: 'reference_image', image_url: { url: 'file:///etc/passwd' } }] } },
      'metadata.content.0.image_url.url',
    ],
    ['10 images', { model: m2, prompt: 'x', metadata: { content: Array.from({ length: 10 }, () => img('reference_image')) } }, 'metadata.content'],
    ['4 videos', { model: m2, prompt: 'x', metadata: { content: [video, video, video, video] } }, 'metadata.content'],
    ['4 audio', { model: m2, prompt: 'x', metadata: { content: [img('reference_image'), audio, audio, audio, audio] } }, 'metadata.content'],
    ['audio only', { model: m2, prompt: 'x', metadata: { content: [audio] } }, 'metadata.content'],
    ['reference video on 1.5', { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { content: [img('first_frame'), video] } }, 'metadata.content'],
    ['reference video on 1.0 lite i2v', { model: 'vendor-vidgen-1-0-lite-i2v', prompt: 'x', metadata: { content: [video] } }, 'metadata.content'],
    ['frames on lite t2v', { model: 'vendor-vidgen-1-0-lite-t2v', prompt: 'x', metadata: { content: [img('first_frame')] } }, 'metadata.content'],
    ['last frame without first', { model: m2, prompt: 'x', metadata: { content: [img('last_frame')] } }, 'metadata.content'],
    [
      'two first frames',
      { model: m2, prompt: 'x', metadata: { content: [img('first_frame'), img('first_frame'), img('reference_image')] } },
      'metadata.content',
    ],
    ['frames beyond 3600 s', { model: m2, prompt: 'x', metadata: { frames: 86_402 } }, 'metadata.frames'],
    ['seed beyond 2^32 - 1', { model: m2, prompt: 'x', metadata: { seed: 4_294_967_296 } }, 'metadata.seed'],
    ['service_tier unknown', { model: m2, prompt: 'x', metadata: { service_tier: 'priority' } }, 'metadata.service_tier'],
    ['ratio free text', { model: m2, prompt: 'x', metadata: { ratio: 'wide' } }, 'metadata.ratio'],
    ['draft not boolean', { model: m2, prompt: 'x', metadata: { draft: 'yes' } }, 'metadata.draft'],
  ];

  it.each(refused)('%s → 400 naming %s', async (_name, body, param) => {
    const r = await refusedWithoutAppend(world.gw, () => submit(body));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: { message: expect.stringMatching(new RegExp(`^${param.replace(/\./g, '\\.')}: `)), type: 'invalid_request_error', param, code: 'invalid_request' },
    });
  });

  it('a missing key is refused with 401 in the same shape', async () => {
    const r = await refusedWithoutAppend(world.gw, () => new Client(world.gw.url).post(PATH, { model: vidgenModels[0], prompt: 'x' }));
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
  });
});

describe('vidgen: billing on what the upstream returns', () => {
  it('resolution omitted: reserves the highest tier up to 1080p, settles on the 720p delivered', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-0-260128', prompt: 'no resolution', seconds: 5 });
    await waitFor(r.body.id);
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.basis).toMatchObject({ tier: '1080p', units: 5 });
    expect(money.reserved).toBe(5 * 8_000);
    expect(money.settled).toMatchObject({ actual: 5 * 4_000, charged: 5 * 4_000, basis: { tier: '720p' } });
  });

  it('mini/fast models reserve 720p when resolution is omitted', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-0-fast-260128', prompt: 'x' });
    expect((await moneyOf(world.gw, world.accountId, r.body.id)).basis).toMatchObject({ tier: '720p', units: 5 });
  });

  it('a higher resolution than requested is charged at its price', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-5-260628', prompt: 'upscaled [sim:res=1080p]', seconds: 4, metadata: { resolution: '480p' } });
    const done = await waitFor(r.body.id);
    expect(done.data.data.resolution).toBe('1080p');
    // The delivered (and charged) tier is shown; the reserved one stays beside it.
    expect(done.data.properties).toMatchObject({ resolution: '1080p', reserved_resolution: '480p', seconds: 4, reserved_seconds: 4 });
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.reserved).toBe(4 * 2_000);
    expect(money.settled).toMatchObject({ actual: 4 * 8_000, charged: 4 * 8_000, basis: { tier: '1080p', units: 4 } });
  });

  it('a longer video than asked for is charged for the seconds asked for', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-5-260628', prompt: 'longer [sim:dur=9]', seconds: 3, metadata: { resolution: '720p' } });
    const done = await waitFor(r.body.id);
    expect(mp4Info((await download(done.data.result_url)).bytes).seconds).toBe(9);
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.settled).toMatchObject({ actual: 3 * 4_000, basis: { units: 3 }, deliveredUnits: 9 });
  });

  it('the 1.5 model prices audio separately, on by default', async () => {
    const on = await submit({ model: 'vendor-vidgen-1-5-pro-251215', prompt: 'with audio', seconds: 2, metadata: { resolution: '480p' } });
    const off = await submit({ model: 'vendor-vidgen-1-5-pro-251215', prompt: 'silent', seconds: 2, metadata: { resolution: '480p', generate_audio: false } });
    expect((await submittedOf(world.gw, on.body.id)).request.metadata.generate_audio).toBe(true);
    expect((await moneyOf(world.gw, world.accountId, on.body.id)).reserved).toBe(2 * 2_000 + 10_000);
    expect((await moneyOf(world.gw, world.accountId, off.body.id)).reserved).toBe(2 * 2_000);
  });

  it('a costlier delivery takes only what the balance holds, never below zero', async () => {
    const poor = await otherCaller(world, 15_000);
    const r = await poor.api.post(PATH, {
      model: 'vendor-vidgen-2-0-mini-260615',
      prompt: 'too rich [sim:res=720p]',
      seconds: 5,
      metadata: { resolution: '480p' },
    });
    expect(r.status).toBe(200);
    await pollUntil(poor.api, `${PATH}/${r.body.id}`, finished);
    const money = await moneyOf(world.gw, poor.accountId, r.body.id);
    expect(money.reserved).toBe(10_000);
    expect(money.settled).toMatchObject({ actual: 20_000, charged: 15_000 });
    const { replay } = await expectBooksBalance(world.gw, poor.accountId);
    expect(replay.balance).toBe(0);
  });

  it('[sim:fail] ends FAILURE with fail_reason and releases the reservation', async () => {
    const r = await submit({ model: 'vendor-vidgen-2-0-260128', prompt: 'doomed [sim:fail]' });
    const done = await waitFor(r.body.id);
    expect(done.data).toMatchObject({ status: 'FAILURE', result_url: '', fail_reason: expect.stringContaining('upstream_failed') });
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.released).toBe(money.reserved);
    expect(money.settled).toBeUndefined();
  });

  it("another account's task answers exactly like a missing one (404)", async () => {
    const mine = await submit({ model: vidgenModels[0], prompt: 'private' });
    const other = await otherCaller(world);
    const theirs = await other.api.get(`${PATH}/${mine.body.id}`);
    const missing = await other.api.get(`${PATH}/task_doesnotexist000000000`);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ error: { ...missing.body.error, message: expect.any(String) } });
    expect(theirs.body.error.code).toBe('task_not_exist');
  });

  it('after every task ends the books balance', async () => {
    await nothingReserved(world.gw, world.accountId);
    await expectBooksBalance(world.gw, world.accountId);
    expect(await expectEachReservationClosedOnce(world.gw, world.accountId)).toBeGreaterThan(10);
  });
});
