/**
 * The stand-in OpenAI-style upstream of the peer scenario (bench/scenarios/peer.ts): LiteLLM and
 * this gateway are measured in front of it, and it is measured directly, so each proxy's cost is
 * what it adds over this. It answers what both callers send and read, and no more:
 *   POST /v1/images/generations       `{created, data: [{b64_json, revised_prompt}], usage}` (one
 *                                     tiny PNG per image; `response_format` is ignored, since the
 *                                     gateway does not forward it and wants b64 back anyway)
 *   POST /v1/videos                   the video object, `queued` (JSON, or the multipart form
 *                                     LiteLLM's OpenAI video provider sends)
 *   GET  /v1/videos/{id}              the same object, `completed` (the gateway then downloads)
 *   GET  /v1/videos/{id}/content      a small MP4 of the video's seconds
 * Plain node:http and stateless (the id carries model, seconds and size), so it costs as little
 * as possible per request and its figures are a floor for the proxies in front of it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { makeMp4, makePng } from '../src/simulator/media.js';

// Encoded once: the upstream's own cost stays a buffer copy, not an encoding per request.
const PNG_B64 = makePng(64, 64, 'peer-bench').toString('base64');
const mp4s = new Map<number, Buffer>();
const mp4Of = (seconds: number): Buffer => mp4s.get(seconds) ?? mp4s.set(seconds, makeMp4(seconds, { seed: 'peer-bench' })).get(seconds)!;

interface Video {
  m: string;
  s: string;
  z: string;
  t: number;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    // undici's form parser, as a fetch Response would read it: no parser of our own.
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    return Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string'));
  }
  const parsed: unknown = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {};
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const videoId = (v: Video): string => `video_${Buffer.from(JSON.stringify(v)).toString('base64url')}`;

function videoOf(id: string): Video | undefined {
  if (!id.startsWith('video_')) return undefined;
  try {
    return JSON.parse(Buffer.from(id.slice('video_'.length), 'base64url').toString('utf8')) as Video;
  } catch {
    return undefined;
  }
}

function videoObject(id: string, v: Video, status: 'queued' | 'completed') {
  const done = status === 'completed';
  return {
    id,
    object: 'video',
    model: v.m,
    status,
    progress: done ? 100 : 0,
    created_at: v.t,
    completed_at: done ? v.t : null,
    expires_at: null,
    seconds: v.s,
    size: v.z,
    error: null,
  };
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true });
  // As the real API: no key, no answer (both callers must send the channel's key).
  if (!/^Bearer \S+/.test(req.headers.authorization ?? ''))
    return send(res, 401, { error: { message: 'no API key', type: 'invalid_request_error', code: 'unauthorized' } });
  if (req.method === 'POST' && path === '/v1/images/generations') {
    const body = await bodyOf(req);
    const n = typeof body.n === 'number' && body.n >= 1 && body.n <= 10 ? body.n : 1;
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    return send(res, 200, {
      created: Math.floor(Date.now() / 1000),
      data: Array.from({ length: n }, () => ({ b64_json: PNG_B64, revised_prompt: prompt })),
      usage: { total_tokens: 10 + 100 * n, input_tokens: 10, output_tokens: 100 * n, input_tokens_details: { text_tokens: 10, image_tokens: 0 } },
    });
  }
  if (req.method === 'POST' && path === '/v1/videos') {
    const body = await bodyOf(req);
    const v: Video = { m: String(body.model ?? ''), s: String(body.seconds ?? '4'), z: String(body.size ?? '720x1280'), t: Math.floor(Date.now() / 1000) };
    const id = videoId(v);
    return send(res, 200, videoObject(id, v, 'queued'));
  }
  const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(path);
  const video = match ? videoOf(decodeURIComponent(match[1]!)) : undefined;
  if (req.method === 'GET' && match && video) {
    if (!match[2]) return send(res, 200, videoObject(match[1]!, video, 'completed'));
    const mp4 = mp4Of(Number(video.s) || 4);
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': mp4.length });
    return void res.end(mp4);
  }
  send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error', code: 'not_found' } });
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) =>
    send(res, 400, { error: { message: err instanceof Error ? err.message : String(err), type: 'invalid_request_error' } }),
  );
});
// Keep-alive longer than the proxies' pools hold idle sockets, so no request races a close.
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${JSON.stringify(server.address())}\n`);
});
