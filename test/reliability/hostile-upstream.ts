/**
 * An upstream that speaks the async images (spec 4.9/4.10), std-image (4.5) and vidgen (4.3/4.4)
 * protocols and misbehaves on purpose. The scenario is the prompt (`scenario:<name>`); the
 * task ids it hands out carry the scenario, so polls misbehave the same way. Every byte it
 * sends is counted per path, and every request is recorded, so a test can tell what the
 * gateway really read.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export const MiB = 1024 * 1024;
/** Offered by `huge-poll` (the gateway must stop reading long before). */
export const HUGE_ANSWER_BYTES = 1024 * MiB;
/** A result file well inside MAX_DOWNLOAD_BYTES, far more than the gateway may hold at once. */
export const BIG_RESULT_BYTES = 160 * MiB;
/** Declared by `declared-huge` (over the 512 MiB download limit). */
export const DECLARED_HUGE_BYTES = 600 * MiB;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A small "PNG" (the gateway only sniffs the signature). */
export const SMALL_PNG = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(256, 7)]);
/** A small "MP4" (`ftyp` at offset 4). */
const SMALL_MP4 = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom'), Buffer.alloc(512, 1)]);
const FILLER = Buffer.alloc(MiB, 0x20);

export interface HostileUpstream {
  url: string;
  /** Result file requests by name (`/files/<name>`), in order. */
  fileRequests: string[];
  /** Bytes of answer bodies actually written, by scenario. */
  bytesSent: Map<string, number>;
  /** The most bytes one streamed answer got out before the reader left, by scenario. */
  largestAnswer: Map<string, number>;
  /** Async image submits received, by their Idempotency-Key (a re-send comes with the same one). */
  submitsByKey: Map<string, number>;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void | Promise<void>;

export async function startHostileUpstream(): Promise<HostileUpstream> {
  const fileRequests: string[] = [];
  const bytesSent = new Map<string, number>();
  const largestAnswer = new Map<string, number>();
  const submitsByKey = new Map<string, number>();
  let origin = '';
  let seq = 0;
  const count = (scenario: string, n: number) => bytesSent.set(scenario, (bytesSent.get(scenario) ?? 0) + n);
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  /** Writes `total` bytes as fast as the reader takes them; stops when the reader leaves. */
  const stream = async (res: ServerResponse, scenario: string, head: Buffer, total: number) => {
    let closed = false;
    res.once('close', () => (closed = true));
    const drainedOrClosed = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    res.write(head);
    let sent = head.length;
    while (sent < total && !closed) {
      const chunk = FILLER.subarray(0, Math.min(FILLER.length, total - sent));
      sent += chunk.length;
      if (!res.write(chunk)) await drainedOrClosed();
    }
    if (!closed) res.end();
    count(scenario, sent);
    largestAnswer.set(scenario, Math.max(largestAnswer.get(scenario) ?? 0, sent));
  };
  /** Headers, then a byte now and then, never the end. */
  const trickle = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"status":"in_progress","progress":');
    const timer = setInterval(() => res.write(' '), 100);
    res.once('close', () => clearInterval(timer));
  };
  /** Never answers at all (the connection stays open until the gateway gives up). */
  const hang = () => undefined;

  const scenarioOf = (body: Record<string, unknown>): string => /scenario:([a-z0-9-]+)/.exec(String(body.prompt ?? ''))?.[1] ?? 'ok';
  const imageTask = (id: string, extra: Record<string, unknown>) => ({
    id,
    task_id: id,
    object: 'image.task',
    created_at: Math.floor(Date.now() / 1000),
    progress: '100%',
    ...extra,
  });
  const urls = (names: string[]) => names.map((name) => ({ url: `${origin}/files/${name}` }));

  /** Counts a submit under its Idempotency-Key; returns how many that key has had, this one included. */
  const countSubmit = (req: IncomingMessage): number => {
    const key = String(req.headers['idempotency-key'] ?? '');
    const seen = (submitsByKey.get(key) ?? 0) + 1;
    submitsByKey.set(key, seen);
    return seen;
  };

  const submitImages: Handler = (req, res, body) => {
    const scenario = scenarioOf(body);
    const seen = countSubmit(req);
    switch (scenario) {
      case 'reset-submit':
        // The connection closed under every submit, no answer.
        return void req.socket.destroy();
      case 'reset-submit-once':
        // The first submit of each task: the connection closed, no answer (a kept-alive socket
        // shut as it was reused looks the same to the caller); the next one is answered.
        if (seen === 1) return void req.socket.destroy();
        return json(res, 200, { id: `${scenario}.${++seq}`, object: 'image.task', status: 'queued', progress: '0%', data: [] });
      case 'hang-submit':
        return hang();
      case 'trickle-submit':
        return trickle(res);
      case 'garbage-submit':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('<html>{"id": oops');
      case 'error-submit':
        return json(res, 503, { error: { message: 'overloaded' } });
      case 'redirect-submit':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return void res.end();
      default:
        return json(res, 200, { id: `${scenario}.${++seq}`, object: 'image.task', status: 'queued', progress: '0%', data: [] });
    }
  };

  const pollImages = async (res: ServerResponse, id: string) => {
    const scenario = id.split('.')[0] ?? '';
    switch (scenario) {
      case 'hang-poll':
        return hang();
      case 'trickle-poll':
        return trickle(res);
      case 'garbage-poll':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"status": "completed", "data": [{"url": ');
      case 'error-poll':
        return json(res, 503, { error: { message: 'still overloaded' } });
      case 'teapot-poll':
        res.writeHead(418);
        return void res.end();
      case 'huge-poll':
        res.writeHead(200, { 'content-type': 'application/json' });
        return stream(res, scenario, Buffer.from('{"status":"completed","data":[],"padding":"'), HUGE_ANSWER_BYTES);
      case 'over-deliver':
        return json(res, 200, imageTask(id, { status: 'completed', data: urls(Array.from({ length: 50 }, (_, i) => `png-${i}`)) }));
      case 'redirect-private':
        return json(res, 200, imageTask(id, { status: 'completed', data: urls(['to-metadata']) }));
      case 'big-result':
        return json(res, 200, imageTask(id, { status: 'completed', data: urls(['big']) }));
      case 'declared-huge':
        return json(res, 200, imageTask(id, { status: 'completed', data: urls(['declared-huge']) }));
      default:
        return json(res, 200, imageTask(id, { status: 'completed', data: urls(['png-0']) }));
    }
  };

  const file = async (res: ServerResponse, name: string) => {
    fileRequests.push(name);
    if (name === 'to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/' });
      return void res.end();
    }
    if (name === 'big') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(BIG_RESULT_BYTES) });
      return stream(res, 'big-result', PNG_SIGNATURE, BIG_RESULT_BYTES);
    }
    if (name === 'declared-huge') {
      // Declares more than the gateway downloads, then sends nothing: refused on the headers.
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(DECLARED_HUGE_BYTES) });
      res.flushHeaders();
      return hang();
    }
    if (name === 'video.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(SMALL_MP4);
    }
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(SMALL_PNG);
  };

  /** Streamed synchronous std-image calls (`stream: true`): server-sent events. */
  const syncImagesStream: Handler = (req, res, body) => {
    const scenario = scenarioOf(body);
    const seen = countSubmit(req);
    // The first call of each task: the connection closed, no answer; the next one is answered.
    if (scenario === 'stream-reset-once' && seen === 1) return void req.socket.destroy();
    if (scenario === 'stream-error-huge') {
      // An error status whose body never stops: read within the limit, then left.
      res.writeHead(500, { 'content-type': 'application/json' });
      return void stream(res, scenario, Buffer.from('{"error":{"message":"'), HUGE_ANSWER_BYTES);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const completed = { type: 'image_generation.completed', b64_json: SMALL_PNG.toString('base64'), usage: { total_tokens: 1 } };
    res.end(`event: ${completed.type}\ndata: ${JSON.stringify(completed)}\n\ndata: [DONE]\n\n`);
  };

  /** Synchronous std-image calls. */
  const syncImages: Handler = (req, res, body) => {
    if (body.stream === true) return syncImagesStream(req, res, body);
    const scenario = scenarioOf(body);
    if (scenario === 'sync-hang') return hang();
    if (scenario === 'sync-trickle') return trickle(res);
    if (scenario === 'sync-garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"data": [{"b64_json": ');
    }
    if (scenario === 'sync-huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void stream(res, scenario, Buffer.from('{"data":[{"b64_json":"'), HUGE_ANSWER_BYTES);
    }
    const count = scenario === 'sync-over-deliver' ? 50 : 1;
    json(res, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: count }, () => ({ b64_json: SMALL_PNG.toString('base64') })) });
  };

  /** vidgen: a 30 s 1080p video for whatever was asked. */
  const submitVideo: Handler = (_req, res, body) => json(res, 200, { id: `${scenarioOf(body)}.${++seq}` });
  const pollVideo = (res: ServerResponse, id: string) =>
    json(res, 200, {
      code: 'success',
      data: { task_id: id, status: 'SUCCESS', progress: '100%', result_url: `${origin}/files/video.mp4`, data: { duration: 30, resolution: '1080p' } },
    });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        /* not JSON */
      }
      const path = new URL(req.url ?? '/', origin).pathname;
      const [, a, b, c, d, e] = path.split('/');
      if (req.method === 'POST' && path === '/v1/images/async/generations') return submitImages(req, res, body);
      if (req.method === 'GET' && a === 'v1' && b === 'images' && c === 'async' && d === 'generations' && e) return pollImages(res, decodeURIComponent(e));
      if (req.method === 'POST' && path === '/v1/images/generations') return syncImages(req, res, body);
      if (req.method === 'POST' && path === '/v1/video/generations') return submitVideo(req, res, body);
      if (req.method === 'GET' && a === 'v1' && b === 'video' && c === 'generations' && d) return pollVideo(res, decodeURIComponent(d));
      if (req.method === 'GET' && a === 'files' && b) return file(res, b);
      json(res, 404, { error: { message: 'no such route' } });
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  origin = `http://127.0.0.1:${address.port}`;
  return {
    url: origin,
    fileRequests,
    bytesSent,
    largestAnswer,
    submitsByKey,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
