/**
 * Streamed downloads through the outbound guard (openGuardedDownload) against real sockets: the
 * body arrives in chunks and is cut off past the limit, the caller's signal ends a body that
 * never finishes, and credentials go to the first origin only, never across a redirect.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DownloadStatusError,
  openGuardedDownload,
  OutboundRefusedError,
  outboundPolicy,
  type OutboundPolicy,
} from '../../src/engine/outbound/outbound-guard.js';

interface Served {
  server: Server;
  origin: string;
  seen: IncomingHttpHeaders[];
}

async function serve(handler: (path: string, res: import('node:http').ServerResponse) => void): Promise<Served> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    handler(new URL(req.url ?? '/', 'http://x').pathname, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

let source: Served;
let elsewhere: Served;

beforeAll(async () => {
  elsewhere = await serve((_path, res) => void res.writeHead(200).end('elsewhere'));
  source = await serve((path, res) => {
    if (path === '/chunks') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(Buffer.alloc(1000, n));
        if (++n === 5) {
          clearInterval(timer);
          res.end();
        }
      }, 10);
      return;
    }
    if (path === '/endless') {
      res.writeHead(200);
      const timer = setInterval(() => res.write(Buffer.alloc(100)), 20);
      res.once('close', () => clearInterval(timer));
      return;
    }
    if (path === '/same-origin-redirect') return void res.writeHead(302, { location: '/chunks' }).end();
    if (path === '/cross-origin-redirect') return void res.writeHead(302, { location: `${elsewhere.origin}/x` }).end();
    if (path === '/broken') {
      res.writeHead(200, { 'content-length': '5000' });
      res.write(Buffer.alloc(1000));
      setTimeout(() => res.destroy(), 20);
      return;
    }
    res.writeHead(404).end();
  });
});
afterAll(async () => {
  for (const s of [source, elsewhere]) {
    s.server.closeAllConnections();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  }
});

const policy = (extra: Partial<OutboundPolicy> = {}): OutboundPolicy => ({
  ...outboundPolicy({ allowLoopbackOutbound: true }, 'http://gateway.invalid:1'),
  ...extra,
});

async function drain(body: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks;
}

describe('openGuardedDownload', () => {
  it('hands the body out as it arrives, with its content type', async () => {
    const download = await openGuardedDownload(`${source.origin}/chunks`, policy());
    expect(download.contentType).toBe('video/mp4');
    const chunks = await drain(download.body);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(chunks).length).toBe(5000);
  });

  it('cuts the body off past maxBytes while it streams', async () => {
    const download = await openGuardedDownload(`${source.origin}/endless`, policy({ maxBytes: 1000 }));
    await expect(drain(download.body)).rejects.toBeInstanceOf(OutboundRefusedError);
  });

  it('ends a body that never finishes at the caller’s signal, however long the policy allows', async () => {
    const started = Date.now();
    const download = await openGuardedDownload(`${source.origin}/endless`, policy({ timeoutMs: 60_000 }), { signal: AbortSignal.timeout(200) });
    await expect(drain(download.body)).rejects.toThrow(/endless/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('ends a body that never finishes at the policy’s deadline', async () => {
    const download = await openGuardedDownload(`${source.origin}/endless`, policy({ timeoutMs: 200 }));
    await expect(drain(download.body)).rejects.toThrow(/not finished within 200 ms/);
  });

  it('reports a connection closed before the declared end as a failure, not a short file', async () => {
    const download = await openGuardedDownload(`${source.origin}/broken`, policy());
    await expect(drain(download.body)).rejects.toThrow(/broken/);
  });

  it('answers a non-2xx status with DownloadStatusError', async () => {
    await expect(openGuardedDownload(`${source.origin}/missing`, policy())).rejects.toBeInstanceOf(DownloadStatusError);
  });

  it('sends the given headers to the first origin, across a same-origin redirect too', async () => {
    const before = source.seen.length;
    const download = await openGuardedDownload(`${source.origin}/same-origin-redirect`, policy(), { headers: { authorization: 'Bearer channel-key' } });
    await drain(download.body);
    expect(source.seen.slice(before).map((h) => h.authorization)).toEqual(['Bearer channel-key', 'Bearer channel-key']);
  });

  it('never sends them across a redirect to another origin', async () => {
    const before = elsewhere.seen.length;
    const download = await openGuardedDownload(`${source.origin}/cross-origin-redirect`, policy(), { headers: { authorization: 'Bearer channel-key' } });
    expect(Buffer.concat(await drain(download.body)).toString()).toBe('elsewhere');
    expect(elsewhere.seen.slice(before)).toHaveLength(1);
    expect(elsewhere.seen[before]?.authorization).toBeUndefined();
  });
});
