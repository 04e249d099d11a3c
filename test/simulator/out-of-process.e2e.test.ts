/**
 * The simulator as a process of its own (`src/simulator/main.ts`, how `npm run bench` runs it):
 * a gateway whose seeded `/_sim` channels resolve to it through `SIMULATOR_URL` drives tasks
 * to their end there, prompt markers included, and its own mount is not called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { pngSize, waitForImageTask } from '../support/images.js';
import { startSimProcess, type SimProcess } from '../support/sim-process.js';
import { pollUntil } from '../support/videos.js';

let sim: SimProcess;
let gw: TestGateway;
let api: Client;

beforeAll(async () => {
  sim = await startSimProcess({ SIM_STEP_MS: '20', LOG_LEVEL: 'info' }, { collectStdout: true });
  // The gateway's own simulator steps for an hour: a task that finishes was answered by the other process.
  gw = await startGateway({ SIMULATOR_URL: sim.url, SIM_STEP_MS: '3600000', POLL_INTERVAL_MS: '20' });
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 500_000_000 });
  api = new Client(gw.url, (await newToken(user.client)).key);
}, 90_000);

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
});

const submitImage = (body: Record<string, unknown>) => api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', ...body });

describe('a gateway on an out-of-process simulator (SIMULATOR_URL)', () => {
  it('drives an image task to completion there and re-hosts its file', async () => {
    const r = await submitImage({ prompt: 'a fox', n: 2, size: '64x96' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await waitForImageTask(api, r.body.id);
    expect(done.status).toBe('completed');
    expect(done.data).toHaveLength(2);
    const file = await fetch(done.data[0].url);
    expect(file.status).toBe(200);
    expect(pngSize(Buffer.from(await file.arrayBuffer()))).toEqual({ width: 64, height: 96 });
    expect(done.data[0].url.startsWith(`${gw.url}/assets/`)).toBe(true);
    // Submit, polls and the file download reached the other process.
    expect(sim.server.output()).toContain('"url":"/_sim/');
    expect(sim.server.output()).toContain('"url":"/_sim/files/');
    // Its submit log names the task it accepted, and the prompt the gateway sent.
    const [submit] = (await sim.submits()).filter((s) => s.promptHead === 'a fox');
    expect(submit).toMatchObject({ family: 'images-async', path: '/v1/images/async/generations', status: 200 });
  });

  it.each([
    ['[sim:fail]', { prompt: 'doomed [sim:fail]' }, { status: 'failed', error: /upstream_failed/ }],
    ['[sim:reject]', { prompt: 'refused [sim:reject]' }, { status: 'failed', error: /upstream_rejected/ }],
    ['[sim:4xx-poll]', { prompt: 'lost [sim:4xx-poll]' }, { status: 'failed', error: /upstream_task_lost/ }],
    ['[sim:partial]', { prompt: 'fewer [sim:partial]', n: 3 }, { status: 'completed', images: 2 }],
    ['[sim:slow]', { prompt: 'patient [sim:slow]' }, { status: 'completed', images: 1 }],
  ] as const)('%s works the same out of process', async (_marker, body, expected) => {
    const r = await submitImage(body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done: { status: string; data: unknown[]; error?: { message: string } } = await waitForImageTask(api, r.body.id);
    expect(done.status).toBe(expected.status);
    if ('error' in expected) expect(done.error?.message).toMatch(expected.error);
    if ('images' in expected) expect(done.data).toHaveLength(expected.images);
  });

  it('[sim:dur=N] renders that many seconds of video', async () => {
    const r = await api.post('/v1/video/generations', { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'a boat [sim:dur=6]', seconds: 4 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await pollUntil(
      api,
      `/v1/video/generations/${r.body.id}`,
      (b: { data?: { status?: string } }) => b.data?.status === 'SUCCESS' || b.data?.status === 'FAILURE',
    );
    expect(done.data).toMatchObject({ status: 'SUCCESS', data: { duration: 6 } });
  });
});
