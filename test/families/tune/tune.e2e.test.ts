import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway, expectNothingAppendedSince } from '../../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { FAST_ENGINE } from '../../support/images.js';
import type { LedgerEntry } from '../../../projections/ledger.js';

let gw: TestGateway;
let admin: Client;
let api: Client;
let other: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 10_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
  other = new Client(gw.url, (await newToken((await newUser(admin, { credit: 1_000_000 })).client)).key);
});
afterAll(() => gw.close());

async function waitForTune(client: Client, id: string) {
  return eventually(
    async () => {
      const r = await client.get(`/tune/fetch/${id}`);
      if (r.status !== 200) throw new Error(`fetch answered ${r.status}: ${JSON.stringify(r.body)}`);
      return ['SUCCESS', 'FAILURE'].includes(r.body.data.status) ? r.body : undefined;
    },
    15_000,
    30,
  );
}

/** The head once settlement of finished tasks has been appended (so only a refusal could move it). */
async function settledHead(): Promise<bigint> {
  await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
  return gw.gateway.deps.events.headPosition();
}

async function submitted(path: string, body: unknown): Promise<string> {
  const r = await api.post(path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toEqual({ code: 'success', message: expect.any(String), data: expect.stringMatching(/^task_/) });
  return r.body.data;
}

async function taskSubmitted(id: string) {
  const [first] = await gw.gateway.deps.events.readStream(`task-${id}`, { maxCount: 1 });
  return first!.data as { request: Record<string, unknown>; callbackUrl?: string; model: string; action: string };
}

async function download(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('tune lyrics (spec 4.11)', () => {
  it('submit → fetch → SUCCESS with the lyrics text in data', async () => {
    const id = await submitted('/tune/submit/LYRICS', { prompt: 'a summer by the sea' });
    const polled = await api.get(`/tune/fetch/${id}`);
    expect(polled.status).toBe(200);
    expect(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS']).toContain(polled.body.data.status);
    const done = await waitForTune(api, id);
    expect(done).toMatchObject({
      code: 'success',
      data: { task_id: id, action: 'LYRICS', status: 'SUCCESS', progress: '100%', fail_reason: '', result_url: '' },
    });
    expect(typeof done.data.data).toBe('string');
    expect(done.data.data).toContain('a summer by the sea');
    expect(done.data.finish_time).toBeGreaterThanOrEqual(done.data.submit_time);
    expect(done.data.start_time).toBeGreaterThanOrEqual(done.data.submit_time);
    expect((await taskSubmitted(id)).request).toEqual({ prompt: 'a summer by the sea', lyrics_model: 'classic' });
  });

  it('lyrics_model remi and hookUrl are kept (the callback address on the task)', async () => {
    const id = await submitted('/tune/submit/LYRICS', { prompt: 'rain', lyrics_model: 'remi', hookUrl: 'https://hooks.example.com/tune' });
    const task = await taskSubmitted(id);
    expect(task).toMatchObject({
      model: 'tune_lyrics',
      action: 'LYRICS',
      request: { prompt: 'rain', lyrics_model: 'remi' },
      callbackUrl: 'https://hooks.example.com/tune',
    });
    expect((await waitForTune(api, id)).data.status).toBe('SUCCESS');
  });
});

describe('tune music (spec 4.11)', () => {
  async function expectSongs(done: { data: { data: unknown; result_url: string } }) {
    const songs = done.data.data as { audio_url: string; title: string; mv: string; lyrics: string; duration: number; id: string; tags: string }[];
    expect(songs.length).toBeGreaterThan(0);
    expect(done.data.result_url).toBe(songs[0]!.audio_url);
    for (const song of songs) {
      expect(song.audio_url.startsWith(gw.url)).toBe(true);
      const file = await download(song.audio_url);
      expect(file.status).toBe(200);
      expect(file.type).toBe('audio/wav');
      expect(file.bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
      expect(file.bytes.subarray(8, 12).toString('latin1')).toBe('WAVE');
      expect(song.duration).toBeGreaterThan(0);
    }
    return songs;
  }

  it('custom lyrics mode: prompt is the lyrics, title, tags and mv reach the song', async () => {
    const id = await submitted('/tune/submit/MUSIC', { prompt: '[Verse]\nHello moon', title: 'Moon song', tags: 'folk, acoustic', mv: 'tune-v4' });
    expect((await taskSubmitted(id)).request).toEqual({
      custom_mode: true,
      prompt: '[Verse]\nHello moon',
      title: 'Moon song',
      tags: 'folk, acoustic',
      instrumental: false,
      mv: 'tune-v4',
    });
    const done = await waitForTune(api, id);
    expect(done.data).toMatchObject({ task_id: id, action: 'MUSIC', status: 'SUCCESS', progress: '100%', fail_reason: '' });
    const songs = await expectSongs(done);
    expect(songs[0]).toMatchObject({ title: 'Moon song', tags: 'folk, acoustic', mv: 'tune-v4', lyrics: '[Verse]\nHello moon' });
  });

  it('description mode: ai_description_prompt, default version tune-v5', async () => {
    const id = await submitted('/tune/submit/MUSIC', { ai_description_prompt: 'an upbeat song about trains' });
    expect((await taskSubmitted(id)).request).toEqual({
      custom_mode: false,
      ai_description_prompt: 'an upbeat song about trains',
      instrumental: false,
      mv: 'tune-v5',
    });
    const songs = await expectSongs(await waitForTune(api, id));
    expect(songs[0]!.mv).toBe('tune-v5');
    expect(songs[0]!.lyrics).not.toBe('');
  });

  it('instrumental wins over make_instrumental; the named options reach the upstream', async () => {
    const body = {
      prompt: 'la la',
      tags: 'jazz',
      make_instrumental: false,
      instrumental: true,
      custom_mode: true,
      negative_tags: 'metal',
      style_weight: 0.5,
      weirdness_constraint: 0,
      audio_weight: 1,
      vocal_gender: 'Female',
      audio_format: 'wav',
      callback_url: 'http://hooks.example.com/m',
    };
    const id = await submitted('/tune/submit/MUSIC', body);
    const task = await taskSubmitted(id);
    expect(task.callbackUrl).toBe('http://hooks.example.com/m');
    expect(task.request).toMatchObject({
      instrumental: true,
      negative_tags: 'metal',
      style_weight: 0.5,
      weirdness_constraint: 0,
      audio_weight: 1,
      vocal_gender: 'Female',
      audio_format: 'wav',
    });
    expect(task.request).not.toHaveProperty('make_instrumental');
    const songs = await expectSongs(await waitForTune(api, id));
    expect(songs[0]!.lyrics).toBe('');
  });

  it("a channel's model mapping of tune_music fixes the version sent upstream", async () => {
    const mapped = await admin.post('/api/channel/', {
      name: 'tune-v3-5 only',
      family: 'tune',
      base_url: '/_sim',
      key: 'sim',
      models: ['tune_music'],
      model_mapping: { tune_music: 'tune-v3-5' },
      priority: 100,
    });
    expect(mapped.status, JSON.stringify(mapped.body)).toBe(200);
    try {
      const id = await submitted('/tune/submit/MUSIC', { prompt: 'mapped', mv: 'tune-v5-5' });
      const songs = await expectSongs(await waitForTune(api, id));
      expect(songs[0]!.mv).toBe('tune-v3-5');
    } finally {
      await admin.delete(`/api/channel/${mapped.body.data.id}`);
    }
  });
});

describe('tune refusals append nothing', () => {
  const refused: [string, string, unknown, string][] = [
    ['lyrics without prompt', 'LYRICS', {}, 'prompt'],
    ['lyrics blank prompt', 'LYRICS', { prompt: '  ' }, 'prompt'],
    ['lyrics theme over 3,000 characters', 'LYRICS', { prompt: 't'.repeat(3001) }, 'prompt'],
    ['lyrics bad model', 'LYRICS', { prompt: 'x', lyrics_model: 'modern' }, 'lyrics_model'],
    ['lyrics bad hookUrl', 'LYRICS', { prompt: 'x', hookUrl: 'ftp://h.example.com' }, 'hookUrl'],
    ['music array body', 'MUSIC', [], 'body'],
    ['music neither prompt nor description', 'MUSIC', { title: 't' }, 'ai_description_prompt'],
    ['music custom_mode without lyrics', 'MUSIC', { custom_mode: true, ai_description_prompt: 'x' }, 'prompt'],
    ['music title over 80', 'MUSIC', { prompt: 'x', title: 't'.repeat(81) }, 'title'],
    ['music title in description mode', 'MUSIC', { ai_description_prompt: 'x', title: 'T' }, 'title'],
    ['music unknown mv', 'MUSIC', { prompt: 'x', mv: 'tune-v6' }, 'mv'],
    ['music instrumental as string', 'MUSIC', { prompt: 'x', instrumental: 'yes' }, 'instrumental'],
    ['music style_weight over 1', 'MUSIC', { prompt: 'x', style_weight: 1.5 }, 'style_weight'],
    ['music vocal_gender', 'MUSIC', { prompt: 'x', vocal_gender: 'male' }, 'vocal_gender'],
    ['music audio_format', 'MUSIC', { prompt: 'x', audio_format: 'flac' }, 'audio_format'],
    ['music callback_url', 'MUSIC', { prompt: 'x', callback_url: 'not a url' }, 'callback_url'],
    ['music task_id', 'MUSIC', { prompt: 'x', task_id: 'task_1' }, 'task_id'],
    ['music continue_clip_id', 'MUSIC', { prompt: 'x', continue_clip_id: 'c1' }, 'continue_clip_id'],
    ['music continue_at', 'MUSIC', { prompt: 'x', continue_at: 30 }, 'continue_at'],
    ['music model', 'MUSIC', { prompt: 'x', model: 'tune-v4' }, 'model'],
  ];

  it.each(refused)('%s → 400 invalid_request naming %s', async (_name, action, body, field) => {
    const head = await settledHead();
    const r = await api.post(`/tune/submit/${action}`, body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    await expectNothingAppendedSince(gw, head, r);
  });

  it('extending fields point at the extend actions', async () => {
    const r = await api.post('/tune/submit/MUSIC', { prompt: 'x', continue_at: 12 });
    expect(r.body.message).toMatch(/EXTEND/);
  });

  it('a submit without a key is 401 and appends nothing', async () => {
    const head = await settledHead();
    const r = await new Client(gw.url).post('/tune/submit/LYRICS', { prompt: 'x' });
    expect(r.status).toBe(401);
    await expectNothingAppendedSince(gw, head, r);
  });
});

describe('tune failures, access and billing', () => {
  it('[sim:fail] ends FAILURE with fail_reason and the reservation is released', async () => {
    const id = await submitted('/tune/submit/MUSIC', { ai_description_prompt: 'doomed [sim:fail]' });
    const done = await waitForTune(api, id);
    expect(done.data).toMatchObject({ status: 'FAILURE', result_url: '', data: null });
    expect(done.data.fail_reason).toMatch(/upstream_failed/);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const events = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    expect(events.find((e) => e.type === 'QuotaReleased' && (e.data as { taskId: string }).taskId === id)).toBeDefined();
    expect(events.find((e) => e.type === 'QuotaSettled' && (e.data as { taskId: string }).taskId === id)).toBeUndefined();
  });

  it('[sim:reject]: the upstream refuses, the task ends FAILURE and nothing is charged', async () => {
    const id = await submitted('/tune/submit/LYRICS', { prompt: 'refused [sim:reject]' });
    const done = await waitForTune(api, id);
    expect(done.data.status).toBe('FAILURE');
    expect(done.data.fail_reason).toMatch(/^upstream_rejected/);
  });

  it('a task the upstream loses ([sim:4xx-poll]) ends FAILURE', async () => {
    const id = await submitted('/tune/submit/MUSIC', { ai_description_prompt: 'lost [sim:4xx-poll]' });
    expect((await waitForTune(api, id)).data.fail_reason).toMatch(/^upstream_task_lost/);
  });

  it("another account's task and a missing one both answer 400 task_not_exist", async () => {
    const id = await submitted('/tune/submit/LYRICS', { prompt: 'private' });
    const theirs = await other.get(`/tune/fetch/${id}`);
    const missing = await other.get('/tune/fetch/task_doesnotexist0000000');
    expect(theirs.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(theirs.body.code).toBe('task_not_exist');
    expect(Object.keys(theirs.body).sort()).toEqual(Object.keys(missing.body).sort());
  });

  it('each action is charged its own model price, per request, in the ledger', async () => {
    const lyrics = await submitted('/tune/submit/LYRICS', { prompt: 'billing' });
    const music = await submitted('/tune/submit/MUSIC', { prompt: 'billing' });
    await waitForTune(api, lyrics);
    await waitForTune(api, music);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    const ledger = (await gw.gateway.deps.views.find<LedgerEntry>('ledger', { accountId }, { limit: 100_000 })).map((l) => l.doc);
    const settled = (taskId: string) => ledger.find((l) => l.type === 'QuotaSettled' && l.taskId === taskId)!;
    expect(settled(lyrics)).toMatchObject({ amount: 5_000, balanceDelta: -5_000, basis: { model: 'tune_lyrics', unit: 'request', units: 1 } });
    expect(settled(music)).toMatchObject({ amount: 50_000, balanceDelta: -50_000, basis: { model: 'tune_music', unit: 'request', units: 1 } });
  });

  it('after every task ends the books balance', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const { charged } = await expectBooksBalance(gw, accountId);
    expect(charged).toBeGreaterThan(0);
    expect(await expectEachReservationClosedOnce(gw, accountId)).toBeGreaterThan(5);
  });
});
