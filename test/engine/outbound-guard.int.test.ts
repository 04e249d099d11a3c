/**
 * The outbound guard against real sockets: address classes, names resolving to refused
 * addresses, redirects checked hop by hop, trusted origins, size and time limits.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blockedAddressReason,
  checkOutboundUrl,
  guardedDownload,
  OutboundRefusedError,
  outboundPolicy,
  type OutboundPolicy,
} from '../../src/engine/outbound/outbound-guard.js';

let server: Server;
let origin: string;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/image') return void res.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end(Buffer.from('png-bytes'));
    if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/image' }).end();
    if (url.pathname === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (url.pathname === '/big') return void res.writeHead(200).end(Buffer.alloc(2048));
    if (url.pathname === '/big-declared') return void res.writeHead(200, { 'content-length': '999999' }).end(Buffer.alloc(10));
    if (url.pathname === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 1_000);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  origin = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const strict = (extra: Partial<OutboundPolicy> = {}): OutboundPolicy => ({
  ...outboundPolicy({ allowLoopbackOutbound: false }, 'http://gateway.invalid:1'),
  ...extra,
});
const trusted = (extra: Partial<OutboundPolicy> = {}): OutboundPolicy => ({ ...strict(), trustedOrigins: [origin], ...extra });

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusedError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundRefusedError);
  return err as OutboundRefusedError;
}

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['fc00::1', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['192.0.2.1', 'reserved'],
  ])('%s is refused (%s)', (address, range) => {
    expect(blockedAddressReason(address, false)).toBe(`${address} is a ${range} address`);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '[2001:4860:4860::8888]'])('%s is public', (address) => {
    expect(blockedAddressReason(address, false)).toBeUndefined();
  });

  it('loopback only when allowed; everything else stays refused', () => {
    expect(blockedAddressReason('127.0.0.1', true)).toBeUndefined();
    expect(blockedAddressReason('::1', true)).toBeUndefined();
    expect(blockedAddressReason('169.254.169.254', true)).toBeDefined();
    expect(blockedAddressReason('10.0.0.1', true)).toBeDefined();
  });
});

describe('guardedDownload', () => {
  it.each([
    ['http://127.0.0.1', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
    ['http://[::1]/a.png', 'loopback'],
    ['http://[::ffff:7f00:1]/a.png', 'loopback'],
  ])('refuses %s before connecting', async (url, range) => {
    expect((await refusal(guardedDownload(url, strict()))).reason).toContain(range);
  });

  it('refuses a name that resolves to a private address (localhost), at connect time', async () => {
    const err = await refusal(guardedDownload(`http://localhost:${port}/image`, strict()));
    expect(err.reason).toMatch(/localhost resolves to a refused address/);
  });

  it('refuses the loopback server itself unless loopback is allowed', async () => {
    await refusal(guardedDownload(`${origin}/image`, strict()));
    const ok = await guardedDownload(`${origin}/image`, strict({ allowLoopback: true }));
    expect(ok.bytes.toString()).toBe('png-bytes');
    expect(ok.contentType).toBe('image/png');
  });

  it('fetches from a trusted origin (the gateway itself) without the address check', async () => {
    const ok = await guardedDownload(`${origin}/redirect?to=/image`, trusted());
    expect(ok).toMatchObject({ contentType: 'image/png', finalUrl: `${origin}/image` });
  });

  it.each([
    ['loopback on another port', 'http://127.0.0.1:9/x'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['IPv6 loopback', 'http://[::1]:9/x'],
    ['a name resolving to loopback', 'http://localhost:9/x'],
    ['a private address', 'http://10.0.0.1/x'],
  ])('refuses a redirect from a trusted origin to %s', async (_name, to) => {
    await refusal(guardedDownload(`${origin}/redirect?to=${encodeURIComponent(to)}`, trusted()));
  });

  it('refuses non-http schemes, also as a redirect target', async () => {
    await refusal(guardedDownload('file:///etc/passwd', strict()));
    await refusal(guardedDownload(`${origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`, trusted()));
  });

  it('stops after maxRedirects', async () => {
    expect((await refusal(guardedDownload(`${origin}/loop`, trusted({ maxRedirects: 3 })))).reason).toMatch(/more than 3 redirects/);
  });

  it('cuts off bodies over maxBytes, declared or not', async () => {
    await expect(guardedDownload(`${origin}/big`, trusted({ maxBytes: 1024 }))).rejects.toThrow(/over the 1024 byte limit/);
    await expect(guardedDownload(`${origin}/big-declared`, trusted({ maxBytes: 1024 }))).rejects.toThrow(/999999 bytes is over/);
  });

  it('gives up after timeoutMs', async () => {
    const started = Date.now();
    await expect(guardedDownload(`${origin}/slow`, trusted({ timeoutMs: 150 }))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('non-2xx answers are errors', async () => {
    await expect(guardedDownload(`${origin}/missing`, trusted())).rejects.toThrow(/answered 404/);
  });
});

describe('checkOutboundUrl (URLs handed on to an upstream)', () => {
  it('refuses literals and names resolving to refused addresses; lets unresolvable names through', async () => {
    await refusal(checkOutboundUrl('http://169.254.169.254/', strict()));
    await refusal(checkOutboundUrl('http://localhost/a.png', strict()));
    await refusal(checkOutboundUrl('http://user:pw@example.com/a.png', strict()));
    await expect(checkOutboundUrl('https://no-such-host.invalid/a.png', strict())).resolves.toBeUndefined();
    await expect(checkOutboundUrl('https://93.184.216.34/a.png', strict())).resolves.toBeUndefined();
  });
});
