/**
 * Outbound URL safety through a real gateway (loopback NOT allowed, the default): reference
 * URLs pointing at loopback, link-local/metadata, private ranges or names resolving there are
 * refused before anything is reserved; result URLs that redirect to the metadata address are
 * never fetched (picgen keeps the upstream URL, std-image fails and releases). The built-in
 * simulator on the gateway's own origin keeps working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Client, type TestGateway } from '../../support/gateway.js';
import { expectNothingAppended, lastCall, syncUser } from '../../support/sync-images.js';
import { plainError } from '../../support/errors.js';

let gw: TestGateway;
let api: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0' });
  expect(gw.config.allowLoopbackOutbound).toBe(false);
  ({ api, accountId } = await syncUser(gw));
});
afterAll(() => gw.close());

const V40 = 'vendor-picgen-4-0-250828';

const refused = [
  ['loopback IPv4', 'http://127.0.0.1/a.png'],
  ['loopback IPv4 with a port', 'http://127.0.0.1:8080/a.png'],
  ['metadata address', 'http://169.254.169.254/latest/meta-data/'],
  ['loopback IPv6', 'http://[::1]/a.png'],
  ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/a.png'],
  ['a name resolving to loopback', 'http://localhost/a.png'],
  ['private 10/8', 'http://10.1.2.3/a.png'],
  ['private 192.168/16', 'https://192.168.0.10/a.png'],
  ['carrier-grade NAT (cloud metadata of some providers)', 'http://100.100.100.200/latest'],
  ['unique-local IPv6', 'http://[fd00:ec2::254]/latest'],
  ['unspecified', 'http://0.0.0.0/a.png'],
] as const;

describe('reference URLs (handed to the upstream) are refused when not public', () => {
  it.each(refused)('picgen edit: %s', async (_name, url) => {
    await expectNothingAppended(gw, async () => {
      const r = await api.post('/v1/images/edits', { model: V40, prompt: 'p', image: ['https://example.com/ok.png', url] });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(plainError('invalid_request', expect.stringMatching(/^image\.1: the URL is not allowed: /)));
    });
  });

  it.each(refused)('chat image_url: %s', async (_name, url) => {
    const r = await api.post('/v1/chat/completions', {
      model: 'pro-image',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'p' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^messages\.0\.content\.1\.image_url\.url: the URL is not allowed: /);
  });

  it('a public name that does not resolve here is left to the upstream', async () => {
    const r = await api.post('/v1/images/edits', { model: V40, prompt: 'p', image: 'https://no-such-host.invalid/a.png' });
    expect(r.status).toBe(200);
  });
});

describe('result URLs (fetched by the gateway) are guarded on every redirect', () => {
  it('picgen: a result URL redirecting to the metadata address is not fetched; the client gets the upstream URL only, and it is charged', async () => {
    const r = await api.post('/v1/images/generations', { model: V40, prompt: 'p [sim:private-url]', size: '1K', response_format: 'b64_json' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toEqual([{ url: `${gw.url}/_sim/redirect/metadata` }]);
    const call = await lastCall(gw, accountId);
    expect(call.settled?.basis.units).toBe(1);
    const succeeded = call.task.find((e) => e.type === 'TaskSucceeded')!.data as { results: unknown[]; upstream: { unhosted: Array<{ reason: string }> } };
    expect(succeeded.results).toEqual([]);
    expect(succeeded.upstream.unhosted[0]!.reason).toMatch(/169\.254\.169\.254 is a linkLocal address/);
  });

  it('picgen b64_json: a failed download leaves only the URL', async () => {
    const r = await api.post('/v1/images/generations', { model: V40, prompt: 'p [sim:broken-url]', size: '1K', response_format: 'b64_json' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data[0])).toEqual(['url']);
  });

  it('std-image: a result that cannot be fetched safely fails the call and releases the reservation', async () => {
    const r = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'p [sim:private-url]' });
    expect(r.status).toBe(502);
    expect(r.body).toEqual(plainError('upstream_error', expect.stringMatching(/refused/), '', 'server_error'));
    const call = await lastCall(gw, accountId);
    expect(call.closing.map((e) => e.type)).toEqual(['QuotaReleased']);
  });

  it('chat: the same for chat-style', async () => {
    const r = await api.post('/v1/chat/completions', { model: 'std-image', messages: [{ role: 'user', content: 'p [sim:private-url]' }] });
    expect(r.status).toBe(502);
    expect((await lastCall(gw, accountId)).released).toBeDefined();
  });
});

describe('ALLOW_LOOPBACK_OUTBOUND=1 (tests, local upstreams)', () => {
  let open: TestGateway;
  beforeAll(async () => {
    open = await startGateway({ SIM_STEP_MS: '0', ALLOW_LOOPBACK_OUTBOUND: '1' });
  });
  afterAll(() => open.close());

  it('loopback references are let through, the metadata address still is not', async () => {
    const user = await syncUser(open);
    const loop = await user.api.post('/v1/images/edits', { model: V40, prompt: 'p', image: 'http://127.0.0.1:9/a.png' });
    expect(loop.status, JSON.stringify(loop.body)).toBe(200);
    const meta = await user.api.post('/v1/images/edits', { model: V40, prompt: 'p', image: 'http://169.254.169.254/latest' });
    expect(meta.status).toBe(400);
  });
});
