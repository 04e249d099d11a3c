/**
 * One URL policy at submit, pinned callback delivery, and free-text bounds, on the assembled
 * gateway over loopback HTTP (ALLOW_LOOPBACK_OUTBOUND off unless said otherwise):
 * - every URL field of every family refuses loopback, private, metadata, odd IPv4 notations,
 *   IPv4-mapped IPv6, names resolving to loopback, `file:` / `gopher:`, credentials and the
 *   gateway's own origin with a 400 naming the field in the family's error shape, appending
 *   nothing; a public-looking name that does not resolve here is let through;
 * - the gateway's own signed, unexpired asset URL is accepted as a reference (only);
 * - callbacks are POSTed through a connection whose own lookup is checked (DNS rebinding);
 * - prompts and other free text are bounded per family: the maximum is accepted, one more refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitTask } from '../../src/engine/tasks/submit.js';
import { guardedPost, OutboundRefusedError, outboundPolicy, type ResolveAll } from '../../src/engine/outbound/outbound-guard.js';
import { authenticate } from '../../src/http/auth/bearer.js';
import type { FastifyRequest } from 'fastify';
import { Client, eventually, expectNothingAppendedSince, startGateway, type Reply, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE } from '../support/images.js';
import { startReceiver } from '../support/receiver.js';
import { syncUser } from '../support/sync-images.js';

type Shape = 'plain' | 'openai' | 'art';
type Body = Record<string, unknown>;

interface UrlCase {
  /** The field, as the refusal must name it. */
  param: string;
  path: string;
  shape: Shape;
  body: (url: string) => Body;
  /** Also acceptable: the list holding the item, where the syntax rules name the list. */
  alsoNamed?: string;
  callback?: boolean;
}

const PUBLIC = 'https://media.example.com/ref.png';
const HOOK = 'https://hooks.example.com/done';
const IMAGES = '/v1/images/async/generations';
const VIDGEN = '/v1/video/generations';
const VID_H3 = '/v1/videos';
const CLIP = '/clip/v1/videos/image2video';
const MOTION_IMAGE = '/vendor/api/v1/services/aigc/image2video/video-synthesis';
const MOTION_TEXT = '/vendor/api/v1/services/aigc/video-generation/video-synthesis';
const V40 = 'vendor-picgen-4-0-250828';
const VIDGEN_MODEL = 'vendor-vidgen-2-5-260628';

const item = (type: string, role: string, url: string) => ({ type, role, [type]: { url } });
const chat = (part: unknown) => ({ model: 'std-image', messages: [{ role: 'user', content: [{ type: 'text', text: 'p' }, part] }] });

const URL_CASES: UrlCase[] = [
  // async images (spec 4.9)
  { param: 'image', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'pro-image', prompt: 'p', image: u }) },
  { param: 'images.1', alsoNamed: 'images', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'pro-image', prompt: 'p', images: [PUBLIC, u] }) },
  { param: 'image', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'anime-diffusion-4-5-full', prompt: 'p', image: u }) },
  { param: 'image', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'vis-imagine-1.0-edit', prompt: 'p', image: u }) },
  { param: 'images.1', alsoNamed: 'images', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'vis-imagine-1.0-edit', prompt: 'p', images: [PUBLIC, u] }) },
  { param: 'image', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'picgen-4-0-250828', prompt: 'p', image: u }) },
  { param: 'images.1', alsoNamed: 'images', path: IMAGES, shape: 'plain', body: (u) => ({ model: 'picgen-4-0-250828', prompt: 'p', images: [PUBLIC, u] }) },
  {
    param: 'metadata.extra.refs.0',
    path: IMAGES,
    shape: 'plain',
    body: (u) => ({ model: 'picgen-4-0-250828', prompt: 'p', metadata: { extra: { refs: [u] } } }),
  },
  // vidgen (4.3)
  {
    param: 'metadata.content.0.image_url.url',
    path: VIDGEN,
    shape: 'openai',
    body: (u) => ({ model: VIDGEN_MODEL, prompt: 'p', metadata: { content: [item('image_url', 'reference_image', u)] } }),
  },
  {
    param: 'metadata.content.0.video_url.url',
    path: VIDGEN,
    shape: 'openai',
    body: (u) => ({ model: VIDGEN_MODEL, prompt: 'p', metadata: { content: [item('video_url', 'reference_video', u)] } }),
  },
  {
    param: 'metadata.content.1.audio_url.url',
    path: VIDGEN,
    shape: 'openai',
    body: (u) => ({
      model: VIDGEN_MODEL,
      prompt: 'p',
      metadata: { content: [item('image_url', 'reference_image', PUBLIC), item('audio_url', 'reference_audio', u)] },
    }),
  },
  {
    param: 'metadata.callback_url',
    callback: true,
    path: VIDGEN,
    shape: 'openai',
    body: (u) => ({ model: VIDGEN_MODEL, prompt: 'p', metadata: { callback_url: u } }),
  },
  // Vid-H3 (4.13)
  { param: 'input_reference', path: VID_H3, shape: 'openai', body: (u) => ({ model: 'Vid-H3', prompt: 'p', input_reference: u }) },
  { param: 'input_reference.image_url', path: VID_H3, shape: 'openai', body: (u) => ({ model: 'Vid-H3', prompt: 'p', input_reference: { image_url: u } }) },
  { param: 'image', path: VID_H3, shape: 'openai', body: (u) => ({ model: 'Vid-H3', prompt: 'p', image: u }) },
  { param: 'images.1', path: VID_H3, shape: 'openai', body: (u) => ({ model: 'Vid-H3', prompt: 'p', images: [PUBLIC, u] }) },
  { param: 'metadata.first_frame_image', path: VID_H3, shape: 'openai', body: (u) => ({ model: 'Vid-H3', prompt: 'p', metadata: { first_frame_image: u } }) },
  {
    param: 'metadata.last_frame_image',
    path: VID_H3,
    shape: 'openai',
    body: (u) => ({ model: 'Vid-H3', prompt: 'p', metadata: { first_frame_image: PUBLIC, last_frame_image: u } }),
  },
  {
    param: 'metadata.content.0.url',
    path: VID_H3,
    shape: 'openai',
    body: (u) => ({ model: 'Vid-H3', prompt: 'p', metadata: { content: [{ type: 'reference_image', url: u }] } }),
  },
  {
    param: 'metadata.callback_url',
    callback: true,
    path: VID_H3,
    shape: 'openai',
    body: (u) => ({ model: 'Vid-H3', prompt: 'p', metadata: { callback_url: u } }),
  },
  // clip (4.12)
  { param: 'image', path: CLIP, shape: 'openai', body: (u) => ({ model_name: 'clip-v1', image: u }) },
  { param: 'image_tail', path: CLIP, shape: 'openai', body: (u) => ({ model_name: 'clip-v1', image: PUBLIC, image_tail: u }) },
  { param: 'metadata.source', path: CLIP, shape: 'openai', body: (u) => ({ model_name: 'clip-v1', image: PUBLIC, metadata: { source: u } }) },
  // motion (4.15)
  ...['image', 'img_url', 'image_url', 'first_frame_url'].map((key): UrlCase => ({
    param: key,
    path: MOTION_IMAGE,
    shape: 'plain',
    body: (u) => ({ model: 'motion2.6-i2v', [key]: u }),
  })),
  { param: 'last_frame_url', path: MOTION_IMAGE, shape: 'plain', body: (u) => ({ model: 'motion2.6-i2v', image: PUBLIC, last_frame_url: u }) },
  { param: 'images.1', path: MOTION_IMAGE, shape: 'plain', body: (u) => ({ model: 'motion2.6-i2v', images: [PUBLIC, u] }) },
  { param: 'media.0.url', path: MOTION_IMAGE, shape: 'plain', body: (u) => ({ model: 'motion2.6-i2v', media: [{ type: 'image', url: u }] }) },
  { param: 'audio_url', path: MOTION_IMAGE, shape: 'plain', body: (u) => ({ model: 'motion2.6-i2v', image: PUBLIC, audio_url: u }) },
  {
    param: 'metadata.input.img_url',
    path: MOTION_IMAGE,
    shape: 'plain',
    body: (u) => ({ model: 'motion2.6-i2v', image: PUBLIC, metadata: { input: { img_url: u } } }),
  },
  {
    param: 'metadata.input.media.0.url',
    path: MOTION_TEXT,
    shape: 'plain',
    body: (u) => ({ model: 'motion2.6-t2v', prompt: 'p', metadata: { input: { media: [{ type: 'image', url: u }] } } }),
  },
  {
    param: 'metadata.parameters.mask_url',
    path: MOTION_TEXT,
    shape: 'plain',
    body: (u) => ({ model: 'motion2.6-t2v', prompt: 'p', metadata: { parameters: { mask_url: u } } }),
  },
  // tune (4.11) and art (4.14): callbacks only
  { param: 'hookUrl', callback: true, path: '/tune/submit/LYRICS', shape: 'plain', body: (u) => ({ prompt: 'a theme', hookUrl: u }) },
  { param: 'callback_url', callback: true, path: '/tune/submit/MUSIC', shape: 'plain', body: (u) => ({ prompt: 'la la la', tags: 'pop', callback_url: u }) },
  { param: 'notifyHook', callback: true, path: '/art/submit/imagine', shape: 'art', body: (u) => ({ prompt: 'a castle', notifyHook: u }) },
  // synchronous images (4.5, 4.8)
  {
    param: 'messages.0.content.1.image_url.url',
    path: '/v1/chat/completions',
    shape: 'plain',
    body: (u) => chat({ type: 'image_url', image_url: { url: u } }),
  },
  {
    param: 'messages.0.content.1.image_url',
    alsoNamed: 'messages.0.content.1.image_url.url',
    path: '/v1/chat/completions',
    shape: 'plain',
    body: (u) => chat({ type: 'image_url', image_url: u }),
  },
  { param: 'image', path: '/v1/images/edits', shape: 'plain', body: (u) => ({ model: V40, prompt: 'p', image: u }) },
  { param: 'image.1', path: '/v1/images/edits', shape: 'plain', body: (u) => ({ model: V40, prompt: 'p', image: [PUBLIC, u] }) },
];

/** The field a refusal names, in each family's error shape, after checking the shape. */
function namedField(shape: Shape, reply: Reply): string {
  const body = reply.body as Body;
  if (shape === 'openai') {
    const error = body.error as { message: string; type: string; param: string; code: string };
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(error.message.startsWith(`${error.param}: `), error.message).toBe(true);
    return error.param;
  }
  const text = shape === 'art' ? (body.description as string) : (body.message as string);
  expect(body).toMatchObject(shape === 'art' ? { code: 4, result: null } : { code: 'invalid_request' });
  return text.slice(0, text.indexOf(': '));
}

let gw: TestGateway;
let api: Client;

beforeAll(async () => {
  gw = await startGateway({ ...FAST_ENGINE, SIM_STEP_MS: '0' });
  expect(gw.config.allowLoopbackOutbound).toBe(false);
  ({ api } = await syncUser(gw, 2_000_000_000));
});
afterAll(() => gw.close());

/**
 * Asserts a 400 naming `param` (or `alsoNamed`) that appended nothing: the store's head did not
 * move (`sameHead`, while no accepted task runs in the background) and no event carries the
 * request's id.
 */
async function expectRefused(c: Pick<UrlCase, 'path' | 'shape' | 'param' | 'alsoNamed'>, body: unknown, what: string, sameHead = true): Promise<void> {
  const head = await gw.gateway.deps.events.headPosition();
  const reply = await api.post(c.path, body);
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).toBe(400);
  expect([c.param, c.alsoNamed], `${what}: ${JSON.stringify(reply.body)}`).toContain(namedField(c.shape, reply));
  if (sameHead) expect(await gw.gateway.deps.events.headPosition(), `${what} appended`).toBe(head);
  await expectNothingAppendedSince(gw, head, reply);
}

describe('every URL field of every family refuses non-public targets (nothing appended or charged)', () => {
  const hostile = (): Array<[string, string]> => [
    ['loopback', 'http://127.0.0.1/x.png'],
    ['a name resolving to loopback', 'http://localhost:8080/x.png'],
    ['private 10/8', 'http://10.0.0.1/x.png'],
    ['private 192.168/16', 'https://192.168.1.20/x.png'],
    ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['hex IPv4', 'http://0x7f000001/x.png'],
    ['decimal IPv4', 'http://2130706433/x.png'],
    ['IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]/x.png'],
    ['file:', 'file:///etc/passwd'],
    ['gopher:', 'gopher://127.0.0.1:6379/_INFO'],
    ['credentials', 'https://user:secret@media.example.com/x.png'],
    ["the gateway's own origin", `${gw.url}/api/admin/metrics`],
    ["the gateway's asset route with a forged signature", `${gw.url}/assets/tasks/x/0.png?exp=9999999999&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`],
  ];

  it.each(URL_CASES.map((c) => [`${c.path} ${c.param}`, c] as const))('%s', async (_name, c) => {
    for (const [what, url] of hostile()) await expectRefused(c, c.body(url), what);
  });

  it('a Vid-H3 multipart form is held to the same policy', async () => {
    const form = new FormData();
    form.set('model', 'Vid-H3');
    form.set('prompt', 'p');
    form.set('metadata[first_frame_image]', 'http://169.254.169.254/latest');
    const head = await gw.gateway.deps.events.headPosition();
    const res = await fetch(`${gw.url}${VID_H3}`, { method: 'POST', headers: { authorization: `Bearer ${api.bearer}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('metadata.first_frame_image');
    expect(await gw.gateway.deps.events.headPosition()).toBe(head);
  });

  it('more than 64 URLs in one request are refused before any is resolved', async () => {
    const refs = Array.from({ length: 65 }, (_, i) => `https://media.example.com/${i}.png`);
    await expectRefused(
      { path: IMAGES, shape: 'plain', param: 'metadata.refs.64' },
      { model: 'picgen-4-0-250828', prompt: 'p', metadata: { refs } },
      '65 URLs',
    );
  });

  it('a callback URL longer than 2048 characters is refused', async () => {
    const long = `https://hooks.example.com/${'a'.repeat(2048)}`;
    await expectRefused(
      { path: VIDGEN, shape: 'openai', param: 'metadata.callback_url' },
      { model: VIDGEN_MODEL, prompt: 'p', metadata: { callback_url: long } },
      'long callback',
    );
  });
});

describe("public-looking URLs are accepted; the gateway's own signed asset URL only as a reference", () => {
  it.each(URL_CASES.map((c) => [`${c.path} ${c.param}`, c] as const))('%s', async (_name, c) => {
    const reply = await api.post(c.path, c.body(c.callback ? HOOK : PUBLIC));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  });

  it('a signed, unexpired asset URL of this gateway is a valid reference; expired or as a callback it is not', async () => {
    const { signer } = gw.gateway.deps;
    const inAnHour = Math.floor(Date.now() / 1000) + 3600;
    const signed = signer.url('tasks/task_x/0.png', inAnHour);
    expect(signed.startsWith(gw.url)).toBe(true);
    const asReference = (url: string) => ({ model: VIDGEN_MODEL, prompt: 'p', metadata: { content: [item('image_url', 'reference_image', url)] } });
    const ok = await api.post(VIDGEN, asReference(signed));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const reference = { path: VIDGEN, shape: 'openai' as const, param: 'metadata.content.0.image_url.url' };
    // Accepted tasks of earlier tests still run: only the request's own events are looked for.
    await expectRefused(reference, asReference(signer.url('tasks/task_x/0.png', Math.floor(Date.now() / 1000) - 1)), 'expired', false);
    await expectRefused(reference, asReference(signed.replace('/assets/tasks/task_x/', '/assets/tasks/task_y/')), 'another key', false);
    await expectRefused(
      { path: VIDGEN, shape: 'openai', param: 'metadata.callback_url' },
      { model: VIDGEN_MODEL, prompt: 'p', metadata: { callback_url: signed } },
      'as a callback',
      false,
    );
  });
});

interface TextCase {
  name: string;
  path: string;
  shape: Shape;
  param: string;
  max: number;
  body: (text: string) => Body;
}

const P = 32_000;
const TEXT_CASES: TextCase[] = [
  ...['pro-image', 'anime-diffusion-4-5-full', 'vis-imagine-1.0', 'picgen-4-0-250828'].map((model): TextCase => ({
    name: `async ${model} prompt`,
    path: IMAGES,
    shape: 'plain',
    param: 'prompt',
    max: P,
    body: (t) => ({ model, prompt: t }),
  })),
  { name: 'std-image prompt', path: '/v1/images/generations', shape: 'plain', param: 'prompt', max: P, body: (t) => ({ model: 'std-image', prompt: t }) },
  { name: 'picgen sync prompt', path: '/v1/images/generations', shape: 'plain', param: 'prompt', max: P, body: (t) => ({ model: V40, prompt: t }) },
  { name: 'picgen edit prompt', path: '/v1/images/edits', shape: 'plain', param: 'prompt', max: P, body: (t) => ({ model: V40, prompt: t, image: PUBLIC }) },
  {
    name: 'chat message',
    path: '/v1/chat/completions',
    shape: 'plain',
    param: 'messages.0.content',
    max: P,
    body: (t) => ({ model: 'std-image', messages: [{ role: 'user', content: t }] }),
  },
  {
    name: 'chat text part',
    path: '/v1/chat/completions',
    shape: 'plain',
    param: 'messages.0.content.0.text',
    max: P,
    body: (t) => ({ model: 'std-image', messages: [{ role: 'user', content: [{ type: 'text', text: t }] }] }),
  },
  {
    // Messages of at most P characters each, alternating user / assistant (the last is a user's).
    name: 'chat conversation',
    path: '/v1/chat/completions',
    shape: 'plain',
    param: 'messages',
    max: 4 * P,
    body: (t) => ({
      model: 'std-image',
      messages: Array.from({ length: Math.ceil(t.length / P) }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: t.slice(i * P, (i + 1) * P) })),
    }),
  },
  { name: 'vidgen prompt', path: VIDGEN, shape: 'openai', param: 'prompt', max: P, body: (t) => ({ model: VIDGEN_MODEL, prompt: t }) },
  { name: 'Vid-H3 prompt', path: VID_H3, shape: 'openai', param: 'prompt', max: P, body: (t) => ({ model: 'Vid-H3', prompt: t }) },
  {
    name: 'Vid-H3 content text',
    path: VID_H3,
    shape: 'openai',
    param: 'metadata.content.1.text',
    max: P,
    body: (t) => ({
      model: 'Vid-H3',
      metadata: {
        content: [
          { type: 'reference_image', url: PUBLIC },
          { type: 'text', text: t },
        ],
      },
    }),
  },
  { name: 'clip prompt', path: '/clip/v1/videos/text2video', shape: 'openai', param: 'prompt', max: P, body: (t) => ({ model_name: 'clip-v1', prompt: t }) },
  {
    name: 'clip negative_prompt',
    path: '/clip/v1/videos/text2video',
    shape: 'openai',
    param: 'negative_prompt',
    max: P,
    body: (t) => ({ model_name: 'clip-v1', prompt: 'p', negative_prompt: t }),
  },
  {
    name: 'clip metadata (JSON)',
    path: '/clip/v1/videos/text2video',
    shape: 'openai',
    param: 'metadata',
    max: 65_536,
    body: (t) => ({ model_name: 'clip-v1', prompt: 'p', metadata: sized(t, (note) => ({ note })) }),
  },
  { name: 'motion prompt', path: MOTION_TEXT, shape: 'plain', param: 'prompt', max: P, body: (t) => ({ model: 'motion2.6-t2v', prompt: t }) },
  {
    name: 'motion negative_prompt',
    path: MOTION_TEXT,
    shape: 'plain',
    param: 'negative_prompt',
    max: P,
    body: (t) => ({ model: 'motion2.6-t2v', prompt: 'p', negative_prompt: t }),
  },
  {
    name: 'motion metadata.input.prompt',
    path: MOTION_TEXT,
    shape: 'plain',
    param: 'metadata.input.prompt',
    max: P,
    body: (t) => ({ model: 'motion2.6-t2v', metadata: { input: { prompt: t } } }),
  },
  {
    name: 'motion metadata (JSON)',
    path: MOTION_TEXT,
    shape: 'plain',
    param: 'metadata',
    max: 65_536,
    body: (t) => ({ model: 'motion2.6-t2v', prompt: 'p', metadata: sized(t, (note) => ({ note })) }),
  },
  {
    name: 'picgen async metadata (JSON)',
    path: IMAGES,
    shape: 'plain',
    param: 'metadata',
    max: 65_536,
    body: (t) => ({ model: 'picgen-4-0-250828', prompt: 'p', metadata: sized(t, (note) => ({ note })) }),
  },
  {
    name: 'picgen tools (JSON)',
    path: '/v1/images/generations',
    shape: 'plain',
    param: 'tools',
    max: 65_536,
    body: (t) => ({ model: 'vendor-picgen-5-0-260128', prompt: 'p', tools: sized(t, (note) => [{ type: 'web_search', note }]) }),
  },
  { name: 'tune lyrics prompt', path: '/tune/submit/LYRICS', shape: 'plain', param: 'prompt', max: 3000, body: (t) => ({ prompt: t }) },
  { name: 'tune music lyrics', path: '/tune/submit/MUSIC', shape: 'plain', param: 'prompt', max: 5000, body: (t) => ({ prompt: t, tags: 'pop' }) },
  {
    name: 'tune music description',
    path: '/tune/submit/MUSIC',
    shape: 'plain',
    param: 'ai_description_prompt',
    max: 3000,
    body: (t) => ({ ai_description_prompt: t }),
  },
  { name: 'art prompt', path: '/art/submit/imagine', shape: 'art', param: 'prompt', max: 6000, body: (t) => ({ prompt: t }) },
  { name: 'art state', path: '/art/submit/imagine', shape: 'art', param: 'state', max: 1024, body: (t) => ({ prompt: 'p', state: t }) },
];

/** `make(note)` with the note padded so that its JSON is exactly `text.length` characters. */
function sized<T>(text: string, make: (note: string) => T): T {
  return make(text.slice(JSON.stringify(make('')).length));
}

describe('free text is bounded per family: the maximum is accepted, one more character refused', () => {
  it.each(TEXT_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const accepted = await api.post(c.path, c.body('x'.repeat(c.max)));
    expect(accepted.status, JSON.stringify(accepted.body).slice(0, 300)).toBe(200);
    const head = await gw.gateway.deps.events.headPosition();
    const refused = await api.post(c.path, c.body('x'.repeat(c.max + 1)));
    expect(refused.status, JSON.stringify(refused.body).slice(0, 300)).toBe(400);
    expect(namedField(c.shape, refused)).toBe(c.param);
    await expectNothingAppendedSince(gw, head, refused);
  });

  it('a prompt of 30 million characters (within the body limit) is refused, not stored', async () => {
    const head = await gw.gateway.deps.events.headPosition();
    const refused = await api.post(VIDGEN, { model: VIDGEN_MODEL, prompt: 'x'.repeat(30_000_000) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'prompt', message: 'prompt: must be at most 32000 characters, got 30000000' });
    await expectNothingAppendedSince(gw, head, refused);
  });
});

describe('ALLOW_LOOPBACK_OUTBOUND=1 (tests) still lets loopback through, and nothing else', () => {
  let open: TestGateway;
  let openApi: Client;
  beforeAll(async () => {
    open = await startGateway({ ...FAST_ENGINE, SIM_STEP_MS: '0', ALLOW_LOOPBACK_OUTBOUND: '1' });
    ({ api: openApi } = await syncUser(open));
  });
  afterAll(() => open.close());

  it('loopback references and callbacks are accepted; metadata and private addresses are not', async () => {
    const body = (ref: string, hook: string) => ({
      model: VIDGEN_MODEL,
      prompt: 'p',
      metadata: { content: [item('image_url', 'reference_image', ref)], callback_url: hook },
    });
    expect((await openApi.post(VIDGEN, body('http://0x7f000001:9/x.png', 'http://localhost:9/hook'))).status).toBe(200);
    const meta = await openApi.post(VIDGEN, body('http://169.254.169.254/latest', HOOK));
    expect(meta.status).toBe(400);
    expect(meta.body.error.param).toBe('metadata.content.0.image_url.url');
    const priv = await openApi.post(VIDGEN, body(PUBLIC, 'http://10.1.2.3/hook'));
    expect(priv.status).toBe(400);
    expect(priv.body.error.param).toBe('metadata.callback_url');
  });
});

describe('callback delivery: the address is checked on the connection itself, no redirects', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let port: number;
  beforeAll(async () => {
    receiver = await startReceiver(() => 200);
    port = Number(new URL(receiver.url).port);
  });
  afterAll(() => receiver.close());

  const closed = outboundPolicy({ allowLoopbackOutbound: false }, '', []);
  const open = outboundPolicy({ allowLoopbackOutbound: true }, '', []);
  /** DNS that answers a public address first and loopback afterwards (a rebinding name). */
  const rebinding = (): ResolveAll => {
    let calls = 0;
    return (_host, _options, callback) => callback(null, [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
  };

  it('a name resolving to loopback at connect time is refused, and nothing reaches the receiver', async () => {
    const before = receiver.received.length;
    await expect(guardedPost(`http://localhost:${port}/hook`, '{}', { 'content-type': 'application/json' }, closed)).rejects.toBeInstanceOf(
      OutboundRefusedError,
    );
    await expect(guardedPost(`http://127.0.0.1:${port}/hook`, '{}', { 'content-type': 'application/json' }, closed)).rejects.toBeInstanceOf(
      OutboundRefusedError,
    );
    expect(receiver.received.length).toBe(before);
  });

  it('a name that resolved public when checked but private when connecting is not delivered', async () => {
    const resolve = rebinding();
    // The check: public.
    const checked = await new Promise<string>((r) => resolve('rebind.example', { family: 0, hints: 0 }, (_e, a) => r(a[0]!.address)));
    expect(checked).toBe('93.184.216.34');
    const before = receiver.received.length;
    const attempt = guardedPost(`http://rebind.example:${port}/hook`, '{}', { 'content-type': 'application/json' }, closed, resolve);
    await expect(attempt).rejects.toThrow(/rebind\.example resolves to a refused address \(127\.0\.0\.1 is a loopback address\)/);
    expect(receiver.received.length).toBe(before);
  });

  it('the connection goes to the address its lookup checked (loopback allowed: delivered there)', async () => {
    const resolve: ResolveAll = (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const before = receiver.received.length;
    const status = await guardedPost(`http://rebind.example:${port}/hook`, '{"a":1}', { 'content-type': 'application/json' }, open, resolve);
    expect(status).toBe(200);
    expect(receiver.received.slice(before).map((r) => r.body)).toEqual(['{"a":1}']);
  });

  it('a redirect is an answer, not followed', async () => {
    const target = await startReceiver(() => 200);
    const redirector: Server = createServer((_req, res) => res.writeHead(307, { location: target.url }).end());
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const status = await guardedPost(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`, '{}', {}, open);
      expect(status).toBe(307);
      expect(target.received).toHaveLength(0);
    } finally {
      redirector.close();
      await target.close();
    }
  });

  it('the deliverer refuses at delivery a callback whose name resolves to loopback (loopback not allowed)', async () => {
    const strict = await startGateway({ ...FAST_ENGINE, CALLBACK_RETRY_SCHEDULE: '0.1', CALLBACK_TIMEOUT_MS: '400', CALLBACK_CHECK_MS: '50' });
    try {
      const user = await syncUser(strict);
      const request = { headers: { authorization: `Bearer ${user.key}` }, ip: '127.0.0.1' } as unknown as FastifyRequest;
      const caller = await authenticate(request, strict.gateway.deps.tokens, new Date());
      // Recorded directly: a callback that passed the submit check and now points at loopback.
      const task = await submitTask(strict.gateway.deps, {
        family: 'image',
        channelFamily: 'images',
        action: 'anime/generate',
        model: 'anime-diffusion-4-5-full',
        caller,
        request: { model: 'anime-diffusion-4-5-full', prompt: 'p', n: 1, size: '1024x1024' },
        units: 1,
        callbackUrl: `http://localhost:${port}/hook`,
        metadata: { at: new Date().toISOString() },
      });
      const before = receiver.received.length;
      const record = await eventually(
        async () => {
          const r = await user.api.get(`/api/callbacks/${task.taskId}`);
          return r.body.data?.state === 'dead' ? r.body.data : undefined;
        },
        15_000,
        100,
      );
      expect(record.attempts).toHaveLength(2);
      for (const a of record.attempts) expect(a).toMatchObject({ status: 0, error: expect.stringMatching(/localhost resolves to a refused address/) });
      expect(receiver.received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
