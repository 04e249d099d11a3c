/**
 * Error bodies of the `{code, message}` routes (spec 4.5–4.11, 7) as two kinds of client read
 * them: the official `openai` client, which reads only `body.error`, and plain HTTP, which
 * reads the spec's `code` and `message`. And the submit rule of spec 7: a refused async image
 * or tune submit answers `code` = `invalid_request`, its HTTP status and precise reason kept.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainError, submitError } from '../support/errors.js';
import { adminClient, Client, expectNothingAppendedSince, newToken, newUser, startGateway, type Reply, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE } from '../support/images.js';
import { TINY_PNG } from '../support/sync-images.js';

let gw: TestGateway;
/** Keys: funded; funded but allowed only pro-image; with no balance at all; capped below any price. */
const keys = { rich: '', limited: '', broke: '', capped: '' };

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  const admin = await adminClient(gw);
  const rich = await newUser(admin, { credit: 50_000_000 });
  keys.rich = (await newToken(rich.client)).key;
  keys.limited = (await newToken(rich.client, { model_limits: ['pro-image'] })).key;
  keys.capped = (await newToken(rich.client, { unlimited_quota: false, remain_quota: 1 })).key;
  keys.broke = (await newToken((await newUser(admin)).client)).key;
});
afterAll(() => gw.close());

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

/** What the client threw; fails the test if the call succeeded or threw something else. */
async function thrown(call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('the official openai client reads the refusals of the {code, message} routes', () => {
  type Case = {
    name: string;
    key: keyof typeof keys;
    call: (client: OpenAI) => Promise<unknown>;
    /** The same request over plain HTTP. */
    raw: (api: Client) => Promise<Reply>;
    status: number;
    code: string;
    param: string;
    message: RegExp;
    /** The submit shape (spec 7): `code` invalid_request, the precise code as `reason`. */
    submit?: boolean;
  };
  const picgen = 'vendor-picgen-4-0-250828';
  const cases: Case[] = [
    {
      name: 'chat completions (4.5): no messages',
      key: 'rich',
      call: (c) => c.chat.completions.create({ model: 'std-image', messages: [] }),
      raw: (api) => api.post('/v1/chat/completions', { model: 'std-image', messages: [] }),
      ...{ status: 400, code: 'invalid_request', param: 'messages', message: /^messages: / },
    },
    {
      name: 'images generations std-image (4.6): a quality it does not know',
      key: 'rich',
      call: (c) => c.images.generate({ model: 'std-image', prompt: 'x', quality: 'ultra' as 'high' }),
      raw: (api) => api.post('/v1/images/generations', { model: 'std-image', prompt: 'x', quality: 'ultra' }),
      ...{ status: 400, code: 'invalid_request', param: 'quality', message: /^quality: / },
    },
    {
      name: 'images generations picgen (4.7): n of 2',
      key: 'rich',
      call: (c) => c.images.generate({ model: picgen, prompt: 'x', n: 2 }),
      raw: (api) => api.post('/v1/images/generations', { model: picgen, prompt: 'x', n: 2 }),
      ...{ status: 400, code: 'invalid_request', param: 'n', message: /^n: / },
    },
    {
      name: 'images generations (4.6): a model the key may not use',
      key: 'limited',
      call: (c) => c.images.generate({ model: 'std-image', prompt: 'x' }),
      raw: (api) => api.post('/v1/images/generations', { model: 'std-image', prompt: 'x' }),
      ...{ status: 403, code: 'model_not_allowed', param: 'model', message: /^model: this API key may not use std-image$/ },
    },
    {
      name: 'images edits picgen (4.8): a mask',
      key: 'rich',
      call: async (c) =>
        c.images.edit({
          model: picgen,
          prompt: 'x',
          image: await toFile(TINY_PNG, 'a.png', { type: 'image/png' }),
          mask: await toFile(TINY_PNG, 'm.png', { type: 'image/png' }),
        }),
      raw: (api) => api.post('/v1/images/edits', { model: picgen, prompt: 'x', image: 'https://a.example/a.png', mask: 'https://a.example/m.png' }),
      ...{ status: 400, code: 'invalid_request', param: 'mask', message: /^mask: / },
    },
    {
      name: 'chat completions (4.5): a balance that covers nothing',
      key: 'broke',
      call: (c) => c.chat.completions.create({ model: 'std-image', messages: [{ role: 'user', content: 'x' }] }),
      raw: (api) => api.post('/v1/chat/completions', { model: 'std-image', messages: [{ role: 'user', content: 'x' }] }),
      ...{ status: 402, code: 'insufficient_quota', param: '', message: /^quota: \d+ needed, 0 available$/ },
    },
    {
      name: 'async image submit (4.9): a balance that covers nothing',
      key: 'broke',
      call: (c) => c.post('/images/async/generations', { body: { model: 'pro-image', prompt: 'x' } }),
      raw: (api) => api.post('/v1/images/async/generations', { model: 'pro-image', prompt: 'x' }),
      ...{ status: 402, code: 'insufficient_quota', param: '', message: /^quota: \d+ needed, 0 available$/, submit: true },
    },
    {
      name: 'async image submit (4.9): a model the key may not use',
      key: 'limited',
      call: (c) => c.post('/images/async/generations', { body: { model: 'anime-diffusion-4-5-full', prompt: 'x' } }),
      raw: (api) => api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'x' }),
      ...{ status: 403, code: 'model_not_allowed', param: 'model', message: /^model: this API key may not use anime-diffusion-4-5-full$/, submit: true },
    },
    {
      name: 'async image query (4.10): no such task',
      key: 'rich',
      call: (c) => c.get('/images/async/generations/task_doesnotexist'),
      raw: (api) => api.get('/v1/images/async/generations/task_doesnotexist'),
      ...{ status: 400, code: 'task_not_exist', param: 'task_id', message: /^task_id: no task task_doesnotexist$/ },
    },
  ];

  it.each(cases)('$name', async (c) => {
    const err = await thrown(() => c.call(openai(keys[c.key])));
    expect(err.status).toBe(c.status);
    // The client's message is `<status> <error.message>`: the gateway's reason, not "(no body)".
    expect(err.message.startsWith(`${c.status} `), err.message).toBe(true);
    expect(err.message.slice(`${c.status} `.length)).toMatch(c.message);
    expect(err).toMatchObject({ code: c.code, param: c.param, type: 'invalid_request_error' });

    const head = await gw.gateway.deps.events.headPosition();
    const raw = await c.raw(new Client(gw.url, keys[c.key]));
    expect(raw.status).toBe(c.status);
    const message = expect.stringMatching(c.message);
    expect(raw.body).toEqual(c.submit ? submitError(c.code, message, c.param) : plainError(c.code, message, c.param));
    await expectNothingAppendedSince(gw, head, raw);
  });
});

describe('a streamed call refused before its first frame answers an HTTP error with the JSON body', () => {
  it('chat completions, stream: true, on a balance that covers nothing: the client raises 402 with the reason', async () => {
    const err = await thrown(() =>
      openai(keys.broke).chat.completions.create({ model: 'std-image', messages: [{ role: 'user', content: 'x' }], stream: true }),
    );
    expect(err.status).toBe(402);
    expect(err.message).toMatch(/^402 quota: \d+ needed, 0 available$/);
    expect(err).toMatchObject({ code: 'insufficient_quota', param: '' });
  });

  it('chat completions, stream: true, refused by the upstream before any frame: 400 JSON, not a 200 event stream', async () => {
    const body = { model: 'std-image', messages: [{ role: 'user' as const, content: 'no [sim:reject]' }], stream: true as const };
    const err = await thrown(() => openai(keys.rich).chat.completions.create(body));
    expect(err.status).toBe(400);
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toMatch(/^400 \S/);

    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.rich}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(plainError('upstream_rejected', err.message.slice('400 '.length), ''));
  });

  it('images generations, stream: true, on a balance that covers nothing: the client raises 402 with the reason', async () => {
    const err = await thrown(() => openai(keys.broke).images.generate({ model: 'pro-image', prompt: 'x', stream: true }));
    expect(err.status).toBe(402);
    expect(err.message).toMatch(/^402 quota: \d+ needed, 0 available$/);
    expect(err.code).toBe('insufficient_quota');
  });
});

describe('a refused async image or tune submit answers code invalid_request (spec 7), its status and reason kept', () => {
  type Submit = [path: string, body: Record<string, unknown>];
  const submits: Submit[] = [
    ['/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'x' }],
    ['/tune/submit/MUSIC', { prompt: 'la la', title: 'x' }],
    ['/tune/submit/LYRICS', { prompt: 'the sea' }],
  ];
  const refusals: Array<[name: string, key: keyof typeof keys | 'none' | 'wrong', status: number, reason: string, param: string, message: RegExp]> = [
    ['no balance', 'broke', 402, 'insufficient_quota', '', /^quota: \d+ needed, 0 available$/],
    ['a model outside the key model_limits', 'limited', 403, 'model_not_allowed', 'model', /^model: this API key may not use /],
    [
      'a key whose cap is below the price',
      'capped',
      403,
      'token_quota_exhausted',
      'Authorization',
      /^Authorization: the API key has \d+ quota left, \d+ needed$/,
    ],
    ['no Authorization header', 'none', 401, 'unauthorized', 'Authorization', /^Authorization: a Bearer API key is required$/],
    ['an unknown key', 'wrong', 401, 'invalid_api_key', 'Authorization', /^Authorization: the API key is not valid$/],
  ];
  const cases = submits.flatMap(([path, body]) =>
    refusals.map(([name, key, status, reason, param, message]) => ({ path, body, name, key, status, reason, param, message })),
  );

  it.each(cases)('$path, $name → $status invalid_request (reason $reason), nothing appended', async (c) => {
    const bearer = c.key === 'none' ? undefined : c.key === 'wrong' ? 'sk-not-a-key' : keys[c.key];
    const head = await gw.gateway.deps.events.headPosition();
    const r = await new Client(gw.url, bearer).post(c.path, c.body);
    expect(r.status).toBe(c.status);
    expect(r.body).toEqual(submitError(c.reason, expect.stringMatching(c.message), c.param));
    await expectNothingAppendedSince(gw, head, r);
  });

  it.each(submits)('%s: a field refusal keeps code invalid_request, reason invalid_request, the field named', async (path) => {
    const r = await new Client(gw.url, keys.rich).post(path, { prompt: 7 });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(submitError('invalid_request', expect.stringMatching(/^\w+: /)));
  });

  it("a refusal before the route (headers over Node's limit) on a submit path is in the submit shape too", async () => {
    const res = await fetch(`${gw.url}/tune/submit/MUSIC`, { method: 'POST', headers: { 'x-padding': 'a'.repeat(20_000) }, body: '{}' });
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual(submitError('headers_too_large', 'headers: larger than this server accepts', 'headers'));
  });

  it('the queries keep their own codes (task_not_exist, unauthorized)', async () => {
    const api = new Client(gw.url, keys.rich);
    expect((await api.get('/v1/images/async/generations/task_nope')).body).toEqual(plainError('task_not_exist', 'task_id: no task task_nope', 'task_id'));
    expect((await api.get('/tune/fetch/task_nope')).body).toEqual(plainError('task_not_exist', 'task_id: no task task_nope', 'task_id'));
    const unauthorised = await new Client(gw.url).get('/tune/fetch/task_nope');
    expect(unauthorised.body).toEqual(plainError('unauthorized', expect.any(String), 'Authorization'));
  });

  it('the accepted submits still answer as before', async () => {
    const api = new Client(gw.url, keys.rich);
    for (const [path, body] of submits) expect((await api.post(path, body)).status, path).toBe(200);
  });
});
