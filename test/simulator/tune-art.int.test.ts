import { afterEach, describe, expect, it } from 'vitest';
import { download, expectPng, getJson, manualClock, postJson, startSim, type SimServer } from './sim-server.js';

const STEP = 1000;
const IMG = 'data:image/png;base64,iVBORw0KGgo=';
const servers: SimServer[] = [];
async function sim(): Promise<{ server: SimServer; clock: ReturnType<typeof manualClock> }> {
  const clock = manualClock();
  const server = await startSim({ stepMs: STEP, now: clock.now, assetRetentionMs: 10 * STEP });
  servers.push(server);
  return { server, clock };
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('tune upstream simulator', () => {
  it('lyrics: SUBMITTED → IN_PROGRESS → SUCCESS with the lyrics text', async () => {
    const { server, clock } = await sim();
    const submit = await postJson(`${server.base}/tune/submit/LYRICS`, { prompt: 'the sea', lyrics_model: 'remi' });
    expect(submit.json).toMatchObject({ code: 'success', data: expect.stringMatching(/^sim_/) });
    const url = `${server.base}/tune/fetch/${String(submit.json.data)}`;
    const seen: string[] = [];
    for (let i = 0; i <= 4; i++, clock.advance(STEP)) seen.push(String(((await getJson(url)).json.data as { status: string }).status));
    expect(seen).toEqual(['SUBMITTED', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'SUCCESS']);
    const done = (await getJson(url)).json.data as { data: string; action: string };
    expect(done.action).toBe('LYRICS');
    expect(done.data).toContain('the sea');
  });

  it('music: two clips of real WAV audio that expire with the retention', async () => {
    const { server, clock } = await sim();
    const submit = await postJson(`${server.base}/tune/submit/MUSIC`, { prompt: 'la la', title: 'T', tags: 'pop', mv: 'tune-v4' });
    clock.advance(4 * STEP);
    const record = (await getJson(`${server.base}/tune/fetch/${String(submit.json.data)}`)).json.data as {
      status: string;
      result_url: string;
      data: { audio_url: string; title: string; mv: string }[];
    };
    expect(record.status).toBe('SUCCESS');
    expect(record.data).toHaveLength(2);
    expect(record.data[0]).toMatchObject({ title: 'T', mv: 'tune-v4' });
    const file = await download(record.result_url);
    expect(file).toMatchObject({ status: 200, type: 'audio/wav' });
    expect(file.bytes.toString('latin1', 8, 12)).toBe('WAVE');
    clock.advance(10 * STEP);
    expect((await download(record.result_url)).status).toBe(404);
  });

  it('markers: reject → 400, 5xx → 503, fail → FAILURE, 4xx-poll → 404', async () => {
    const { server, clock } = await sim();
    expect((await postJson(`${server.base}/tune/submit/LYRICS`, { prompt: 'x [sim:reject]' })).status).toBe(400);
    expect((await postJson(`${server.base}/tune/submit/MUSIC`, { ai_description_prompt: 'x [sim:5xx]' })).status).toBe(503);
    const failed = await postJson(`${server.base}/tune/submit/MUSIC`, { ai_description_prompt: 'x [sim:fail]' });
    const lost = await postJson(`${server.base}/tune/submit/MUSIC`, { ai_description_prompt: 'x [sim:4xx-poll]' });
    clock.advance(4 * STEP);
    expect((await getJson(`${server.base}/tune/fetch/${String(failed.json.data)}`)).json.data).toMatchObject({
      status: 'FAILURE',
      fail_reason: expect.stringContaining('sim:fail'),
    });
    expect((await getJson(`${server.base}/tune/fetch/${String(lost.json.data)}`)).status).toBe(404);
  });
});

describe('art upstream simulator', () => {
  async function finished(server: SimServer, clock: ReturnType<typeof manualClock>, kind: string, body: unknown) {
    const submit = await postJson(`${server.base}/art/submit/${kind}`, body);
    expect(submit.json).toMatchObject({ code: 1, description: 'Submit success', properties: {} });
    clock.advance(4 * STEP);
    const { json } = await getJson(`${server.base}/art/task/${String(submit.json.result)}/fetch`);
    return json as { id: string; status: string; imageUrl: string; images: string[]; prompt: string; width: number; height: number };
  }

  it('IMAGINE: a grid PNG and four quadrant PNGs; UPSCALE of it; DESCRIBE gives prompts', async () => {
    const { server, clock } = await sim();
    const grid = await finished(server, clock, 'imagine', { prompt: 'a fox' });
    expect(grid).toMatchObject({ status: 'SUCCESS', width: 1024, height: 1024, prompt: 'a fox' });
    expect(expectPng((await download(grid.imageUrl)).bytes)).toEqual({ width: 1024, height: 1024 });
    expect(grid.images).toHaveLength(4);
    expect(expectPng((await download(grid.images[3]!)).bytes)).toEqual({ width: 512, height: 512 });
    const up = await finished(server, clock, 'change', { taskId: grid.id, action: 'UPSCALE', index: 4 });
    expect(up.images).toEqual([up.imageUrl]);
    const described = await finished(server, clock, 'describe', { base64: IMG });
    expect(described.prompt.split('\n\n')).toHaveLength(4);
  });

  it('CHANGE of an unfinished or foreign job is refused in the art error shape', async () => {
    const { server } = await sim();
    const running = await postJson(`${server.base}/art/submit/imagine`, { prompt: 'x' });
    const notDone = await postJson(`${server.base}/art/submit/change`, { taskId: running.json.result, action: 'REROLL' });
    expect(notDone).toMatchObject({ status: 400, json: { code: 4, result: null } });
    const foreign = await postJson(`${server.base}/art/submit/change`, { taskId: 'sim_nope.x', action: 'REROLL' });
    expect(foreign).toMatchObject({ status: 404, json: { code: 4, description: 'taskId: task_no_found' } });
    expect((await getJson(`${server.base}/art/task/sim_nope.x/fetch`)).json).toEqual({ code: 4, description: 'task_no_found', result: null });
  });

  it('markers in state: reject → 400 code 4, 5xx → 503 code 9', async () => {
    const { server } = await sim();
    expect(await postJson(`${server.base}/art/submit/describe`, { base64: IMG, state: '[sim:reject]' })).toMatchObject({ status: 400, json: { code: 4 } });
    expect(await postJson(`${server.base}/art/submit/blend`, { base64Array: [IMG, IMG], state: '[sim:5xx]' })).toMatchObject({
      status: 503,
      json: { code: 9 },
    });
  });
});
