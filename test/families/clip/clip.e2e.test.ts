import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clipModels } from '../../../src/families/clip/catalog.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { Client } from '../../support/gateway.js';
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

const BASE = '/clip/v1/videos';
const IMAGE = 'https://media.example.com/frame.png';
const finished = (body: any) => body.data?.task_status === 'succeed' || body.data?.task_status === 'failed';
const waitFor = (action: string, id: string, api = world.api) => pollUntil(api, `${BASE}/${action}/${id}`, finished);
const bodyFor = (action: string, model: string): Record<string, unknown> =>
  action === 'text2video' ? { model_name: model, prompt: 'a kite over a beach' } : { model_name: model, image: IMAGE, image_tail: IMAGE };

describe('clip: every model on both paths to succeed (spec 4.12, 2.5)', () => {
  const cases = clipModels.flatMap((model) => (['text2video', 'image2video'] as const).map((action) => [model, action] as const));

  it.each(cases)('%s %s', async (model, action) => {
    const r = await world.api.post(`${BASE}/${action}`, bodyFor(action, model));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      code: 0,
      message: 'SUCCEED',
      request_id: expect.any(String),
      data: { task_id: expect.stringMatching(/^task_/), task_status: 'submitted' },
    });
    const id = r.body.data.task_id;

    const task = await submittedOf(world.gw, id);
    const mode = model === 'clip-v2-master' ? 'pro' : 'std';
    expect(task.request).toMatchObject({ model_name: model, mode, duration: 5, aspect_ratio: '1:1', cfg_scale: 0.5 });

    const done = await waitFor(action, id);
    expect(done).toMatchObject({ code: 0, message: 'SUCCEED', data: { task_id: id, task_status: 'succeed', task_status_msg: '', final_unit_deduction: 5 } });
    expect(done.data.updated_at).toBeGreaterThanOrEqual(done.data.created_at);
    const [video] = done.data.task_result.videos;
    expect(video).toEqual({ id: expect.any(String), url: expect.stringContaining('/assets/'), duration: 5 });
    const file = await download(video.url);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(mp4Info(file.bytes).seconds).toBe(5);
  });

  it('a task is found under either query path', async () => {
    const r = await world.api.post(`${BASE}/text2video`, { model_name: 'clip-v1', prompt: 'either path' });
    const id = r.body.data.task_id;
    const viaText = await world.api.get(`${BASE}/text2video/${id}`);
    const viaImage = await world.api.get(`${BASE}/image2video/${id}`);
    expect(viaText.status).toBe(200);
    expect(viaImage.status).toBe(200);
    expect(viaImage.body.data.task_id).toBe(id);
  });

  it('model_name wins over model; explicit fields and metadata are forwarded as given', async () => {
    const metadata = { user: 'u-1', nested: { tag: 'x' } };
    const r = await world.api.post(`${BASE}/image2video`, {
      model: 'clip-v1',
      model_name: 'clip-v1-6',
      image: IMAGE,
      prompt: 'p',
      negative_prompt: 'blur',
      mode: 'pro',
      duration: '10',
      aspect_ratio: '16:9',
      cfg_scale: 0.8,
      metadata,
      camera_control: { type: 'simple' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await submittedOf(world.gw, r.body.data.task_id);
    expect(task.model).toBe('clip-v1-6');
    expect(task.request).toEqual({
      model_name: 'clip-v1-6',
      prompt: 'p',
      negative_prompt: 'blur',
      image: IMAGE,
      mode: 'pro',
      duration: 10,
      aspect_ratio: '16:9',
      cfg_scale: 0.8,
      metadata,
    });
  });

  it("another account's task answers exactly like a missing one (404)", async () => {
    const r = await world.api.post(`${BASE}/text2video`, { model_name: 'clip-v1', prompt: 'private' });
    const other = await otherCaller(world);
    const theirs = await other.api.get(`${BASE}/text2video/${r.body.data.task_id}`);
    const missing = await other.api.get(`${BASE}/text2video/task_doesnotexist000000000`);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.error.code).toBe('task_not_exist');
    expect(Object.keys(theirs.body.error)).toEqual(Object.keys(missing.body.error));
  });
});

describe('clip: refusals append nothing and answer {error:{message,type,param,code}}', () => {
  beforeAll(() => nothingReserved(world.gw, world.accountId));
  const refused: [string, string, unknown, string][] = [
    ['no model', 'text2video', { prompt: 'x' }, 'model_name'],
    ['unknown model_name', 'text2video', { model_name: 'clip-v9', prompt: 'x' }, 'model_name'],
    ['unknown model alias', 'text2video', { model: 'clip-v9', prompt: 'x' }, 'model'],
    ['v2-master in std', 'text2video', { model_name: 'clip-v2-master', prompt: 'x', mode: 'std' }, 'mode'],
    ['unknown mode', 'text2video', { model_name: 'clip-v1', prompt: 'x', mode: 'max' }, 'mode'],
    ['text2video without prompt', 'text2video', { model_name: 'clip-v1' }, 'prompt'],
    ['text2video with an image', 'text2video', { model_name: 'clip-v1', prompt: 'x', image: IMAGE }, 'image'],
    ['image2video without image', 'image2video', { model_name: 'clip-v1', prompt: 'x', image_tail: IMAGE }, 'image'],
    ['image not a string', 'image2video', { model_name: 'clip-v1', image: 42 }, 'image'],
    ['duration 0', 'text2video', { model_name: 'clip-v1', prompt: 'x', duration: 0 }, 'duration'],
    ['duration decimal', 'text2video', { model_name: 'clip-v1', prompt: 'x', duration: 5.5 }, 'duration'],
    ['aspect_ratio word', 'text2video', { model_name: 'clip-v1', prompt: 'x', aspect_ratio: 'wide' }, 'aspect_ratio'],
    ['cfg_scale above 1', 'text2video', { model_name: 'clip-v1', prompt: 'x', cfg_scale: 1.5 }, 'cfg_scale'],
    ['metadata not an object', 'text2video', { model_name: 'clip-v1', prompt: 'x', metadata: [1] }, 'metadata'],
  ];

  it.each(refused)('%s → 400 naming %s', async (_name, action, body, param) => {
    const r = await refusedWithoutAppend(world.gw, () => world.api.post(`${BASE}/${action}`, body));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: { message: expect.stringMatching(new RegExp(`^${param}: `)), type: 'invalid_request_error', param, code: 'invalid_request' },
    });
  });

  it('no key → 401 in the same shape', async () => {
    const r = await refusedWithoutAppend(world.gw, () => new Client(world.gw.url).post(`${BASE}/text2video`, { model_name: 'clip-v1', prompt: 'x' }));
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 'unauthorized', type: 'invalid_request_error' });
  });
});

describe('clip: billing on the seconds delivered, at the mode reserved', () => {
  it('fewer seconds delivered return the difference', async () => {
    const r = await world.api.post(`${BASE}/text2video`, { model_name: 'clip-v1', prompt: 'short [sim:dur=3]', duration: 5 });
    const done = await waitFor('text2video', r.body.data.task_id);
    expect(done.data).toMatchObject({ final_unit_deduction: 3, task_result: { videos: [{ duration: 3 }] } });
    const money = await moneyOf(world.gw, world.accountId, r.body.data.task_id);
    expect(money.reserved).toBe(5 * 3_000);
    expect(money.settled).toMatchObject({ actual: 3 * 3_000, charged: 3 * 3_000, basis: { tier: 'std', units: 3 } });
  });

  it('more seconds delivered than asked for are not charged (recorded as delivered)', async () => {
    const r = await world.api.post(`${BASE}/image2video`, { model_name: 'clip-v2-master', image: IMAGE, prompt: 'long [sim:dur=8]', duration: 5 });
    await waitFor('image2video', r.body.data.task_id);
    const money = await moneyOf(world.gw, world.accountId, r.body.data.task_id);
    expect(money.reserved).toBe(5 * 6_000);
    expect(money.settled).toMatchObject({ actual: 5 * 6_000, charged: 5 * 6_000, basis: { tier: 'pro', units: 5 }, deliveredUnits: 8 });
  });

  it('[sim:fail] ends failed with a message and releases the reservation', async () => {
    const r = await world.api.post(`${BASE}/text2video`, { model_name: 'clip-v1-6', prompt: 'doomed [sim:fail]' });
    const done = await waitFor('text2video', r.body.data.task_id);
    expect(done.data).toMatchObject({
      task_status: 'failed',
      task_status_msg: expect.stringContaining('upstream_failed'),
      task_result: { videos: [] },
      final_unit_deduction: 0,
    });
    const money = await moneyOf(world.gw, world.accountId, r.body.data.task_id);
    expect(money.released).toBe(money.reserved);
    expect(money.settled).toBeUndefined();
  });

  it('after every task ends the books balance', async () => {
    await nothingReserved(world.gw, world.accountId);
    await expectBooksBalance(world.gw, world.accountId);
    expect(await expectEachReservationClosedOnce(world.gw, world.accountId)).toBeGreaterThan(8);
  });
});
