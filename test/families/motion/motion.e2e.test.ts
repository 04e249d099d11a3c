import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motionImageModels, motionTextModels } from '../../../src/families/motion/catalog.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { Client, newToken } from '../../support/gateway.js';
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
import { plainError } from '../../support/errors.js';

let world: VideoWorld;
beforeAll(async () => {
  world = await startVideoWorld();
});
afterAll(() => world.gw.close());

const TEXT = '/vendor/api/v1/services/aigc/video-generation/video-synthesis';
const IMAGE = '/vendor/api/v1/services/aigc/image2video/video-synthesis';
const TASKS = '/vendor/api/v1/tasks';
const FIRST = 'https://media.example.com/first.png';
const LAST = 'https://media.example.com/last.png';
const finished = (body: any) => body.output?.task_status === 'SUCCEEDED' || body.output?.task_status === 'FAILED';
const waitFor = (id: string, api = world.api) => pollUntil(api, `${TASKS}/${id}`, finished);

async function expectSucceeded(submitted: { status: number; body: any }, seconds: number) {
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  expect(submitted.body).toEqual({
    request_id: expect.any(String),
    output: { task_id: expect.stringMatching(/^task_/), task_status: 'PENDING' },
    code: '',
    message: '',
  });
  const done = await waitFor(submitted.body.output.task_id);
  expect(done).toMatchObject({
    request_id: expect.any(String),
    output: {
      task_id: submitted.body.output.task_id,
      task_status: 'SUCCEEDED',
      submit_time: expect.any(String),
      end_time: expect.any(String),
      video_url: expect.stringContaining('/assets/'),
    },
    usage: { video_duration: seconds, video_count: 1 },
  });
  const file = await download(done.output.video_url);
  expect(file.headers.get('content-type')).toBe('video/mp4');
  expect(mp4Info(file.bytes).seconds).toBe(seconds);
  return done;
}

describe('motion: every model to SUCCEEDED (spec 4.15, 2.8)', () => {
  it.each(motionTextModels)('text-to-video %s', async (model) => {
    await expectSucceeded(await world.api.post(TEXT, { model, prompt: 'waves on a shore', duration: 4 }), 4);
  });

  it.each(motionImageModels)('image-to-video %s', async (model) => {
    await expectSucceeded(await world.api.post(IMAGE, { model, image: FIRST, seconds: 3 }), 3);
  });

  it('builds the native upstream request from the flat fields and metadata.input / metadata.parameters', async () => {
    const r = await world.api.post(TEXT, {
      model: 'motion2.6-t2v',
      prompt: 'p',
      negative_prompt: 'n',
      size: '1280x720',
      ratio: '16:9',
      seconds: 6,
      prompt_extend: false,
      watermark: true,
      audio: true,
      seed: 42,
      metadata: { input: { template: 'flying', prompt: 'overridden' }, parameters: { shot_type: 'multi', duration: 9 } },
    });
    const task = await submittedOf(world.gw, r.body.output.task_id);
    expect(task.action).toBe('text2video');
    expect(task.basis).toMatchObject({ units: 6, tier: '720P' });
    expect(task.request).toEqual({
      model: 'motion2.6-t2v',
      input: { template: 'flying', prompt: 'p', negative_prompt: 'n' },
      parameters: { shot_type: 'multi', ratio: '16:9', prompt_extend: false, watermark: true, audio: true, seed: 42, size: '1280*720', duration: 6 },
    });
  });

  it('first and last frames, and media with a video reference', async () => {
    const frames = await world.api.post(IMAGE, { model: 'motion2.2-kf2v-flash', images: [FIRST, LAST], resolution: '480p' });
    expect((await submittedOf(world.gw, frames.body.output.task_id)).request.input).toEqual({ first_frame_url: FIRST, last_frame_url: LAST });
    expect((await submittedOf(world.gw, frames.body.output.task_id)).action).toBe('keyframes2video');
    const media = [
      { type: 'video', url: 'https://media.example.com/v.mp4' },
      { type: 'image', url: FIRST },
    ];
    const reference = await world.api.post(IMAGE, { model: 'motion2.6-i2v', prompt: 'dance', media, audio_url: 'https://media.example.com/a.mp3' });
    const task = await submittedOf(world.gw, reference.body.output.task_id);
    expect(task.action).toBe('reference2video');
    expect(task.request.input).toEqual({ prompt: 'dance', media, audio_url: 'https://media.example.com/a.mp3' });
    await expectSucceeded(reference, 5);
  });

  it('a slow task is PENDING or RUNNING first', async () => {
    const r = await world.api.post(TEXT, { model: 'motion2.7-t2v', prompt: 'slow [sim:slow]' });
    const seen = new Set<string>();
    await pollUntil(world.api, `${TASKS}/${r.body.output.task_id}`, (body) => {
      seen.add(body.output.task_status);
      return finished(body);
    });
    expect(seen.has('RUNNING')).toBe(true);
    expect(seen.has('SUCCEEDED')).toBe(true);
  });

  it('the channel API key: a token bound to a channel sends its tasks only there', async () => {
    const channel = await world.admin.post('/api/channel/', {
      name: 'motion key',
      family: 'motion',
      base_url: '/_sim',
      key: 'vendor-key',
      models: ['motion2.7-t2v'],
    });
    expect(channel.status).toBe(200);
    const bound = new Client(world.gw.url, (await newToken(world.session, { channel_id: channel.body.data.id })).key);
    const r = await bound.post(TEXT, { model: 'motion2.7-t2v', prompt: 'via my channel' });
    expect(r.status).toBe(200);
    await waitFor(r.body.output.task_id, bound);
    const [submitted, dispatched] = await world.gw.gateway.deps.events.readStream(`task-${r.body.output.task_id}`);
    expect((submitted!.data as { channelCandidates: string[] }).channelCandidates).toEqual([channel.body.data.id]);
    expect(dispatched!.data).toMatchObject({ channelId: channel.body.data.id });
    const elsewhere = await refusedWithoutAppend(world.gw, () => bound.post(TEXT, { model: 'motion3.0-video', prompt: 'not on my channel' }));
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toEqual(plainError('model_not_available'));
  });
});

describe('motion: what spec 4.15 allows is accepted, and charged seconds × resolution', () => {
  const VIDEO = 'https://media.example.com/v.mp4';
  const AUDIO = 'https://media.example.com/a.mp3';

  async function expectCharged(taskId: string, seconds: number, tier: string, price: number) {
    await waitFor(taskId);
    const money = await moneyOf(world.gw, world.accountId, taskId);
    expect(money.reserved).toBe(seconds * price);
    expect(money.settled).toMatchObject({ charged: seconds * price, basis: { tier, units: seconds } });
  }

  it('images longer than two: the first two are the first and last frame', async () => {
    const r = await world.api.post(IMAGE, {
      model: 'motion2.2-kf2v-flash',
      images: [FIRST, LAST, 'https://media.example.com/third.png'],
      resolution: '480P',
      duration: 3,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.output.task_id);
    expect(task.action).toBe('keyframes2video');
    expect(task.request.input).toEqual({ first_frame_url: FIRST, last_frame_url: LAST });
    await expectCharged(r.body.output.task_id, 3, '480P', 2_000);
  });

  it('a first frame together with media references', async () => {
    const media = [
      { type: 'video', url: VIDEO },
      { type: 'image', url: LAST },
    ];
    const r = await world.api.post(IMAGE, { model: 'motion2.6-i2v', image: FIRST, media, resolution: '720P', duration: 4 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.output.task_id);
    expect(task.action).toBe('reference2video');
    expect(task.request.input).toEqual({ img_url: FIRST, media });
    await expectCharged(r.body.output.task_id, 4, '720P', 4_000);
  });

  it('media of audio only, and more than three videos', async () => {
    const audio = await world.api.post(IMAGE, {
      model: 'motion2.6-i2v',
      prompt: 'sound',
      media: [{ type: 'audio', url: AUDIO }],
      resolution: '480P',
      duration: 2,
    });
    expect(audio.status, JSON.stringify(audio.body)).toBe(200);
    const videos = Array.from({ length: 4 }, (_, i) => ({ type: 'video', url: `https://media.example.com/v${i}.mp4` }));
    const many = await world.api.post(IMAGE, { model: 'motion2.6-i2v', media: videos, resolution: '480P', duration: 2 });
    expect(many.status, JSON.stringify(many.body)).toBe(200);
    expect((await submittedOf(world.gw, many.body.output.task_id)).request.input.media).toEqual(videos);
    await expectCharged(audio.body.output.task_id, 2, '480P', 2_000);
    await expectCharged(many.body.output.task_id, 2, '480P', 2_000);
  });
});

describe('motion: refusals append nothing and answer {code, message}', () => {
  beforeAll(() => nothingReserved(world.gw, world.accountId));
  const refused: [string, string, unknown, string][] = [
    ['no model', TEXT, { prompt: 'x' }, 'model'],
    ['image model on the text path', TEXT, { model: 'motion2.2-kf2v-flash', prompt: 'x' }, 'model'],
    ['text model on the image path', IMAGE, { model: 'motion3.0-video', image: FIRST }, 'model'],
    ['text without prompt', TEXT, { model: 'motion3.0-video' }, 'prompt'],
    ['image field on the text path', TEXT, { model: 'motion3.0-video', prompt: 'x', img_url: FIRST }, 'img_url'],
    ['image path without a frame or media', IMAGE, { model: 'motion2.2-kf2v-flash', prompt: 'x' }, 'image'],
    ['two different first frames', IMAGE, { model: 'motion2.2-kf2v-flash', image: FIRST, img_url: LAST }, 'image'],
    ['last frame alone', IMAGE, { model: 'motion2.2-kf2v-flash', last_frame_url: LAST, media: [{ type: 'image', url: FIRST }] }, 'last_frame_url'],
    ['two different last frames', IMAGE, { model: 'motion2.2-kf2v-flash', images: [FIRST, LAST], last_frame_url: FIRST }, 'last_frame_url'],
    ['images not an array', IMAGE, { model: 'motion2.2-kf2v-flash', images: FIRST }, 'images'],
    ['an images item not a URL', IMAGE, { model: 'motion2.2-kf2v-flash', images: [FIRST, LAST, 'not a url'] }, 'images.2'],
    ['media on the text path', TEXT, { model: 'motion3.0-video', prompt: 'x', media: [{ type: 'video', url: FIRST }] }, 'media'],
    ['seed negative', TEXT, { model: 'motion3.0-video', prompt: 'x', seed: -1 }, 'seed'],
    ['duration above 3600', TEXT, { model: 'motion3.0-video', prompt: 'x', duration: 3601 }, 'duration'],
    ['media bad type', IMAGE, { model: 'motion2.6-i2v', media: [{ type: 'gif', url: FIRST }] }, 'media.0.type'],
    ['duration 0', TEXT, { model: 'motion3.0-video', prompt: 'x', duration: 0 }, 'duration'],
    ['seconds not whole', TEXT, { model: 'motion3.0-video', prompt: 'x', seconds: 2.5 }, 'seconds'],
    [
      'metadata duration not whole',
      TEXT,
      { model: 'motion3.0-video', prompt: 'x', metadata: { parameters: { duration: 'long' } } },
      'metadata.parameters.duration',
    ],
    ['resolution 4K', TEXT, { model: 'motion3.0-video', prompt: 'x', resolution: '4K' }, 'resolution'],
    ['size above 1080P', TEXT, { model: 'motion3.0-video', prompt: 'x', size: '3840*2160' }, 'size'],
    ['size and resolution disagree', TEXT, { model: 'motion3.0-video', prompt: 'x', size: '832*480', resolution: '1080P' }, 'resolution'],
    ['ratio word', TEXT, { model: 'motion3.0-video', prompt: 'x', ratio: 'wide' }, 'ratio'],
    ['watermark not boolean', TEXT, { model: 'motion3.0-video', prompt: 'x', watermark: 'no' }, 'watermark'],
    ['metadata.input not an object', TEXT, { model: 'motion3.0-video', prompt: 'x', metadata: { input: 'x' } }, 'metadata.input'],
  ];

  it.each(refused)('%s → 400 naming %s', async (_name, path, body, param) => {
    const r = await refusedWithoutAppend(world.gw, () => world.api.post(path, body));
    expect(r.status).toBe(400);
    expect(r.body).toEqual(plainError('invalid_request', expect.stringMatching(new RegExp(`^${param.replace(/\./g, '\\.')}: `))));
  });

  it('no key → 401 {code, message}', async () => {
    const r = await refusedWithoutAppend(world.gw, () => new Client(world.gw.url).post(TEXT, { model: 'motion3.0-video', prompt: 'x' }));
    expect(r.status).toBe(401);
    expect(r.body).toEqual(plainError('unauthorized'));
  });
});

describe('motion: billing on the delivery', () => {
  it('resolution omitted: reserved at 1080P, settled at the 720P delivered', async () => {
    const r = await world.api.post(TEXT, { model: 'motion3.0-video', prompt: 'default', duration: 5 });
    const done = await waitFor(r.body.output.task_id);
    expect(done.usage.SR).toBe(720);
    const money = await moneyOf(world.gw, world.accountId, r.body.output.task_id);
    expect(money.reserved).toBe(5 * 8_000);
    expect(money.settled).toMatchObject({ actual: 5 * 4_000, charged: 5 * 4_000, basis: { tier: '720P' } });
  });

  it('a higher resolution delivered costs more; more seconds than asked for are not charged', async () => {
    const r = await world.api.post(TEXT, { model: 'motion3.0-video', prompt: 'more [sim:res=1080P] [sim:dur=7]', resolution: '480P', duration: 5 });
    await waitFor(r.body.output.task_id);
    const money = await moneyOf(world.gw, world.accountId, r.body.output.task_id);
    expect(money.reserved).toBe(5 * 2_000);
    expect(money.settled).toMatchObject({ actual: 5 * 8_000, charged: 5 * 8_000, basis: { tier: '1080P', units: 5 }, deliveredUnits: 7 });
  });

  it('[sim:fail] ends FAILED with code and message, and releases the reservation', async () => {
    const r = await world.api.post(TEXT, { model: 'motion3.0-video', prompt: 'doomed [sim:fail]' });
    const done = await waitFor(r.body.output.task_id);
    expect(done.output).toMatchObject({ task_status: 'FAILED', code: 'InternalError', message: expect.any(String) });
    expect(done.output.video_url).toBeUndefined();
    const money = await moneyOf(world.gw, world.accountId, r.body.output.task_id);
    expect(money.released).toBe(money.reserved);
    expect(money.settled).toBeUndefined();
  });

  it("another account's task answers exactly like a missing one (404)", async () => {
    const r = await world.api.post(TEXT, { model: 'motion3.0-video', prompt: 'private' });
    const other = await otherCaller(world);
    const theirs = await other.api.get(`${TASKS}/${r.body.output.task_id}`);
    const missing = await other.api.get(`${TASKS}/task_doesnotexist000000000`);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.code).toBe('task_not_exist');
    expect(missing.body.code).toBe('task_not_exist');
  });

  it('after every task ends the books balance', async () => {
    await nothingReserved(world.gw, world.accountId);
    await expectBooksBalance(world.gw, world.accountId);
    expect(await expectEachReservationClosedOnce(world.gw, world.accountId)).toBeGreaterThan(15);
  });
});
