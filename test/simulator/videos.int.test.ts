import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRenderMarkers, pixelsOf } from '../../src/simulator/video-common.js';
import { mp4Info } from '../support/videos.js';
import { AUTH, download, getJson, manualClock, postJson, startSim, type SimServer } from './sim-server.js';

const STEP = 1000;
const clock = manualClock();
let server: SimServer;
beforeAll(async () => {
  server = await startSim({ stepMs: STEP, now: clock.now, assetRetentionMs: 10 * STEP });
});
afterAll(() => server.close());

/** Each upstream: how to submit, where its task is, and where its status, video and delivery are. */
interface SimUpstream {
  name: string;
  submit: (prompt: string) => [string, Record<string, unknown>];
  idOf: (json: any) => string;
  taskPath: (id: string) => string;
  status: (json: any) => string;
  video: (json: any) => Promise<Buffer>;
  delivered: (json: any) => { seconds: number; resolution: string };
}

const upstreams: SimUpstream[] = [
  {
    name: 'vidgen',
    submit: (prompt) => ['/v1/video/generations', { model: 'vendor-vidgen-2-5-260628', prompt, seconds: 4, metadata: { resolution: '480p' } }],
    idOf: (json) => json.id,
    taskPath: (id) => `/v1/video/generations/${id}`,
    status: (json) => json.data.status,
    video: async (json) => (await download(json.data.result_url)).bytes,
    delivered: (json) => ({ seconds: json.data.data.duration, resolution: json.data.data.resolution }),
  },
  {
    name: 'Vid-H3',
    submit: (prompt) => ['/v1/videos', { model: 'Vid-H3', prompt, seconds: '4', size: '768P' }],
    idOf: (json) => json.id,
    taskPath: (id) => `/v1/videos/${id}`,
    status: (json) => json.status,
    video: async (json) => Buffer.from(await (await fetch(`${server.base}/v1/videos/${json.id}/content`, { headers: AUTH })).arrayBuffer()),
    delivered: (json) => ({ seconds: Number(json.seconds), resolution: json.size }),
  },
  {
    name: 'clip',
    submit: (prompt) => ['/clip/v1/videos/text2video', { model_name: 'clip-v1', prompt, duration: 4, mode: 'std' }],
    idOf: (json) => json.data.task_id,
    taskPath: (id) => `/clip/v1/videos/text2video/${id}`,
    status: (json) => json.data.task_status,
    video: async (json) => (await download(json.data.task_result.videos[0].url)).bytes,
    delivered: (json) => ({ seconds: json.data.task_result.videos[0].duration, resolution: 'std' }),
  },
  {
    name: 'motion',
    submit: (prompt) => [
      '/vendor/api/v1/services/aigc/video-generation/video-synthesis',
      { model: 'motion3.0-video', input: { prompt }, parameters: { duration: 4, size: '832*480' } },
    ],
    idOf: (json) => json.output.task_id,
    taskPath: (id) => `/vendor/api/v1/tasks/${id}`,
    status: (json) => json.output.task_status,
    video: async (json) => (await download(json.output.video_url)).bytes,
    delivered: (json) => ({ seconds: json.usage.video_duration, resolution: `${json.usage.SR}P` }),
  },
];

const FINAL = { vidgen: 'SUCCESS', 'Vid-H3': 'completed', clip: 'succeed', motion: 'SUCCEEDED' } as Record<string, string>;
const FAILED = { vidgen: 'FAILURE', 'Vid-H3': 'failed', clip: 'failed', motion: 'FAILED' } as Record<string, string>;
const REQUESTED = { vidgen: '480p', 'Vid-H3': '768P', clip: 'std', motion: '480P' } as Record<string, string>;

async function submitted(upstream: SimUpstream, prompt: string): Promise<string> {
  const [path, body] = upstream.submit(prompt);
  const { status, json } = await postJson(`${server.base}${path}`, body);
  expect(status, JSON.stringify(json)).toBe(200);
  return upstream.idOf(json);
}

describe.each(upstreams)('simulated $name upstream', (upstream) => {
  it('renders what was asked, as an MP4 of that duration, after four steps', async () => {
    const id = await submitted(upstream, 'a calm lake');
    expect(upstream.status((await getJson(`${server.base}${upstream.taskPath(id)}`)).json)).not.toBe(FINAL[upstream.name]);
    clock.advance(4 * STEP);
    const { json } = await getJson(`${server.base}${upstream.taskPath(id)}`);
    expect(upstream.status(json)).toBe(FINAL[upstream.name]);
    expect(upstream.delivered(json)).toEqual({ seconds: 4, resolution: REQUESTED[upstream.name] });
    expect(mp4Info(await upstream.video(json)).seconds).toBe(4);
  });

  it('[sim:dur=N] and [sim:res=R] change what is delivered (clip has no resolution)', async () => {
    const id = await submitted(upstream, 'different [sim:dur=9] [sim:res=1080p]');
    clock.advance(4 * STEP);
    const { json } = await getJson(`${server.base}${upstream.taskPath(id)}`);
    const resolution = { vidgen: '1080p', 'Vid-H3': '1080p', clip: 'std', motion: '1080P' }[upstream.name];
    expect(upstream.delivered(json)).toEqual({ seconds: 9, resolution });
  });

  it('[sim:fail] fails, [sim:4xx-poll] is lost, [sim:reject] and [sim:5xx] refuse the submit', async () => {
    const failing = await submitted(upstream, 'x [sim:fail]');
    const lost = await submitted(upstream, 'x [sim:4xx-poll]');
    clock.advance(4 * STEP);
    expect(upstream.status((await getJson(`${server.base}${upstream.taskPath(failing)}`)).json)).toBe(FAILED[upstream.name]);
    expect((await getJson(`${server.base}${upstream.taskPath(lost)}`)).status).toBe(404);
    const [path, body] = upstream.submit('x [sim:reject]');
    expect((await postJson(`${server.base}${path}`, body)).status).toBe(400);
    const [path5, body5] = upstream.submit('x [sim:5xx]');
    expect((await postJson(`${server.base}${path5}`, body5)).status).toBe(503);
  });
});

describe('video simulator helpers', () => {
  it('reads render markers; the first of each kind wins', () => {
    expect(parseRenderMarkers(['a [sim:res=720p] b [SIM:DUR=12]', '[sim:dur=3]'])).toEqual({ resolution: '720p', seconds: 12 });
    expect(parseRenderMarkers(['[sim:fail]', undefined])).toEqual({});
  });

  it('names resolutions in 16:9 pixels', () => {
    expect(['480p', '720P', '768P', '1080p', '2K', '4k'].map(pixelsOf)).toEqual([
      { width: 854, height: 480 },
      { width: 1280, height: 720 },
      { width: 1366, height: 768 },
      { width: 1920, height: 1080 },
      { width: 2560, height: 1440 },
      { width: 3840, height: 2160 },
    ]);
  });
});
