/**
 * Client-caused errors on the assembled gateway, one by one (issue 12, finding 4): broken
 * multipart, an impossible Last-Event-ID, JSON nested absurdly deep, wrong or malformed
 * bodies, an unsatisfiable Range. Each is a 4xx in the family's error shape naming the field
 * or header, and appends nothing. The generated suite (test/reliability/bad-input) looks wider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, expectNothingAppendedSince, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { TINY_PNG } from '../support/fuzz/multipart.js';
import { plainError, submitError } from '../support/errors.js';

let gw: TestGateway;
let key: string;
let admin: Client;

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0' });
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 100_000_000 });
  key = (await newToken(user.client)).key;
});
afterAll(() => gw.close());

/** Any family's error body, as far as these tests read it. */
interface ErrorBody {
  code?: string | number;
  message?: string;
  success?: boolean;
  description?: string;
  result?: null;
  error?: { message: string; type: string; param: string; code: string };
}

async function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer) {
  const head = await gw.gateway.deps.events.headPosition();
  const res = await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${key}`, ...headers }, body });
  const text = await res.text();
  const reply = { status: res.status, body: (text ? JSON.parse(text) : {}) as ErrorBody, headers: res.headers };
  await expectNothingAppendedSince(gw, head, reply);
  return reply;
}

const B = 'fuzzBoundary';
const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = `--${B}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${TINY_PNG.toString('latin1')}\r\n`;
const form = `${field('model', 'vendor-picgen-4-0-250828')}${field('prompt', 'p')}${file}--${B}--\r\n`;
const formType = `multipart/form-data; boundary=${B}`;

describe('broken multipart is a 400 naming the body, never a 500', () => {
  const broken: Array<[string, string, string]> = [
    ['no boundary', 'multipart/form-data', form],
    ['a truncated body', formType, form.slice(0, 60)],
    ['a file part cut short', formType, form.slice(0, form.indexOf('\r\n', form.indexOf('IHDR')) + 2)],
    ['no closing boundary', formType, form.slice(0, form.lastIndexOf(`--${B}--`))],
    ['bytes that are not a form', formType, 'garbage'],
  ];

  it.each(broken)('POST /v1/images/edits with %s', async (_name, contentType, body) => {
    const r = await send('POST', '/v1/images/edits', { 'content-type': contentType }, Buffer.from(body, 'latin1'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual(plainError('invalid_request', expect.stringMatching(/^body: the multipart form could not be parsed/), 'body'));
  });

  it.each(broken)('POST /v1/videos (Vid-H3) with %s', async (_name, contentType, body) => {
    const r = await send('POST', '/v1/videos', { 'content-type': contentType }, Buffer.from(body, 'latin1'));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'body', code: 'invalid_request' });
  });

  it('a part with a malformed header: skipped by the parser, the rest of the form judged (400 naming a field)', async () => {
    const r = await send('POST', '/v1/images/edits', { 'content-type': formType }, `--${B}\r\nnot a header\r\n\r\nx\r\n--${B}--\r\n`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual(plainError('invalid_request', expect.stringMatching(/^model: required/), 'model'));
    const v = await send('POST', '/v1/videos', { 'content-type': formType }, `--${B}\r\nnot a header\r\n\r\nx\r\n--${B}--\r\n`);
    expect(v.status).toBe(400);
    expect(v.body.error?.param).toMatch(/\w/);
  });

  it('a form field nested deeper than 64 levels is refused naming it', async () => {
    const deepKey = `metadata${'[a]'.repeat(80)}`;
    const r = await send('POST', '/v1/videos', { 'content-type': formType }, `${field('model', 'Vid-H3')}${field(deepKey, 'x')}--${B}--\r\n`);
    expect(r.status).toBe(400);
    expect(r.body.error?.message).toMatch(/^metadata\[a\].*: form key nested deeper than 64 levels/);
  });

  it('a picgen JSON form field nested deeper than 64 levels is refused naming it', async () => {
    const r = await send(
      'POST',
      '/v1/images/edits',
      { 'content-type': formType },
      `${field('model', 'vendor-picgen-4-0-250828')}${field('tools', '['.repeat(65) + ']'.repeat(65))}--${B}--\r\n`,
    );
    expect(r.status).toBe(400);
    expect(r.body).toEqual(plainError('invalid_request', 'tools: JSON nested deeper than 64 levels', 'tools'));
  });
});

describe('GET /api/events/stream checks where it starts before answering 200', () => {
  const stream = async (query: string, headers: Record<string, string>) => {
    const res = await fetch(`${gw.url}/api/events/stream${query}`, { headers: { cookie: admin.cookie!, ...headers } });
    if (res.status === 200) {
      await res.body?.cancel();
      return { status: 200, body: {} as ErrorBody };
    }
    return { status: res.status, body: (await res.json()) as ErrorBody };
  };

  it.each([['9223372036854775808'], ['18446744073709551616'], ['99999999999999999999999'], ['-1'], ['1e3'], ['abc'], ['1, 2']])(
    'Last-Event-ID %s is a 400 naming the header',
    async (id) => {
      const r = await stream('', { 'last-event-id': id });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'invalid_request', message: expect.stringMatching(/^Last-Event-ID: /) });
    },
  );

  it('a position after the head was never an id of this stream: 400', async () => {
    const head = await gw.gateway.deps.events.headPosition();
    expect((await stream('', { 'last-event-id': String(head + 1000n) })).status).toBe(400);
    expect((await stream('', { 'last-event-id': String(head) })).status).toBe(200);
    expect((await stream('', { 'last-event-id': '0' })).status).toBe(200);
  });

  it('?after= and ?from= are checked the same way, naming themselves', async () => {
    expect((await stream('?after=-5', {})).body.message).toMatch(/^after: /);
    expect((await stream('?from=yesterday', {})).body.message).toMatch(/^from: /);
    expect((await stream('?from=beginning', {})).status).toBe(200);
    expect((await stream('?from=now', {})).status).toBe(200);
    // An empty Last-Event-ID is no id, as an EventSource sends before its first event.
    expect((await stream('', { 'last-event-id': '' })).status).toBe(200);
  });
});

describe('bodies fastify refuses answer in the family shape, naming body or header', () => {
  const deep = (depth: number) => `{"model":"Vid-H3","metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;

  it('JSON nested deeper than 64 levels: 400 on every family', async () => {
    const openai = await send('POST', '/v1/videos', { 'content-type': 'application/json' }, deep(100_000));
    expect(openai.status).toBe(400);
    expect(openai.body.error).toMatchObject({ param: 'body', message: 'body: JSON nested deeper than 64 levels' });
    const plain = await send('POST', '/v1/images/async/generations', { 'content-type': 'application/json' }, deep(65));
    expect(plain.body).toEqual(submitError('invalid_request', 'body: JSON nested deeper than 64 levels', 'body'));
    const art = await send('POST', '/art/submit/imagine', { 'content-type': 'application/json' }, deep(70));
    expect(art.body).toEqual({ code: 4, description: 'body: JSON nested deeper than 64 levels', result: null });
    // At the bound the body is parsed and judged by the route (here: not a valid Vid-H3 body).
    const atBound = await send('POST', '/v1/videos', { 'content-type': 'application/json' }, deep(63));
    expect(atBound.status).toBe(400);
    expect(atBound.body.error?.message).not.toMatch(/nested/);
  });

  it.each([
    ['malformed JSON', 400, 'body', 'application/json', '{"model":'],
    ['empty JSON', 400, 'body', 'application/json', ''],
    ['a __proto__ key', 400, 'body', 'application/json', '{"__proto__":{"x":1}}'],
    ['an unknown media type', 415, 'content-type', 'application/xml', '<a/>'],
  ])('%s on /v1/videos: %i naming %s', async (_name, status, param, contentType, body) => {
    const r = await send('POST', '/v1/videos', { 'content-type': contentType }, body);
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ param, message: expect.stringMatching(new RegExp(`^${param}: `)) });
  });

  it('a body sent to a method the path does not have: refused in the shape of the path', async () => {
    // 405 naming the methods it has, before the body is read (test/http/method-not-allowed.e2e.test.ts).
    const r = await send('PATCH', '/v1/videos', { 'content-type': 'application/json' }, '{bad');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(r.body.error).toMatchObject({ param: 'method', code: 'method_not_allowed' });
    const missing = await send('GET', '/api/callbacks/', {});
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, code: 'not_found' });
    const tooLong = await send('GET', `/art/task/${'x'.repeat(150)}/fetch`, {});
    expect(tooLong.status).toBe(414);
    expect(tooLong.body).toMatchObject({ code: 4, result: null });
  });
});

describe('assets', () => {
  it('an unsatisfiable Range is a 416 with an error body naming Range', async () => {
    const r = await new Client(gw.url, key).post('/v1/images/generations', { model: 'vendor-picgen-4-0-250828', prompt: 'p' });
    expect(r.status).toBe(200);
    const res = await fetch(r.body.data[0].url, { headers: { range: 'bytes=99999999-' } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toMatch(/^bytes \*\/\d+$/);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(plainError('range_not_satisfiable', expect.stringMatching(/^Range: /), 'Range'));
  });
});
