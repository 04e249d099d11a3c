/**
 * JSON over HTTP to upstreams: one deadline and one byte limit per call, and the
 * retryable/final split of failures.
 *
 * - The deadline (`timeoutMs`, and the caller's `signal`, e.g. the task's maximum age) covers
 *   the whole call: connecting, the headers and every byte of the body. An upstream that sends
 *   headers and then trickles (or never ends) its body is cut off at the deadline.
 * - The body is read as it arrives and abandoned as soon as it passes `maxBytes` (checked
 *   against Content-Length first), so a huge answer never sits in memory whole.
 * Both are the upstream's failure, retryable: another channel may answer properly.
 */
import { UpstreamError } from './upstream.js';

export interface UpstreamReply {
  status: number;
  body: unknown;
}

/** Longest one upstream call (submit, poll) may take unless the caller says otherwise. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/**
 * Largest upstream JSON answer read. The biggest legitimate answers carry Base64 images: a
 * synchronous image call returns up to 10 (pro-image `n`) or 15 (picgen sequential) images
 * inline, and an async pro-image poll returns its images the same way. A high-quality
 * 1536×1024 PNG is about 3 MiB, a 2K/4K JPEG 1–3 MiB, so such an answer is 20–60 MiB of Base64
 * (4/3 of the bytes). 64 MiB leaves room for that and for JSON around it; it is also the
 * per-image limit of downloaded results (MAX_RESULT_BYTES), so inline and downloaded images
 * are bounded alike. Anything larger is not an answer but a misbehaving upstream.
 */
export const MAX_UPSTREAM_ANSWER_BYTES = 64 * 1024 * 1024;

export interface UpstreamCallOptions {
  key: string;
  body?: unknown;
  /** Deadline for the whole call, headers and body (default DEFAULT_UPSTREAM_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Aborts the call early (the task's own deadline); combined with `timeoutMs`. */
  signal?: AbortSignal | undefined;
  /** Largest body read (default MAX_UPSTREAM_ANSWER_BYTES). */
  maxBytes?: number;
  /** Sent as the `Idempotency-Key` header (a submit's client reference, UpstreamContext.idempotencyKey). */
  idempotencyKey?: string | undefined;
}

export async function upstreamJson(method: 'GET' | 'POST', url: string, options: UpstreamCallOptions): Promise<UpstreamReply> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_UPSTREAM_ANSWER_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const why = (err: unknown): string =>
    timeout.aborted
      ? `no complete answer within ${timeoutMs} ms`
      : options.signal?.aborted
        ? 'the task ran out of time'
        : err instanceof Error
          ? err.message
          : String(err);
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${options.key}`,
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal,
      redirect: 'error',
    });
  } catch (err) {
    // Connection refused, reset, DNS failure or timeout: another channel may do better.
    throw new UpstreamError(`upstream unreachable: ${why(err)}`, true);
  }
  let text: string;
  try {
    text = await readBody(res, maxBytes);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError(`upstream answer broke off: ${why(err)}`, true);
  }
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* keep the text */
  }
  return { status: res.status, body };
}

/** The body as text, read chunk by chunk and abandoned past `maxBytes`. */
async function readBody(res: Response, maxBytes: number): Promise<string> {
  const tooLarge = (size: string): UpstreamError => new UpstreamError(`upstream answer of ${size} is over the ${maxBytes} byte limit`, true);
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(`${declared} bytes`);
  }
  if (!res.body) return '';
  // fetch's body is typed ReadableStream<any>; its chunks are bytes.
  const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** The message an upstream error body carries, in any of the spec's error shapes. */
export function upstreamMessage(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 500);
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const err = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>) : undefined;
    for (const m of [err?.message, b.message, b.description, b.fail_reason]) if (typeof m === 'string' && m) return m.slice(0, 500);
  }
  return 'no message';
}

/** 5xx and 429 are worth another channel; other 4xx are the request's own fault. */
export function failureOf(reply: UpstreamReply, what: string): UpstreamError {
  const retryable = reply.status >= 500 || reply.status === 429 || reply.status === 408;
  return new UpstreamError(`${what}: upstream answered ${reply.status}: ${upstreamMessage(reply.body)}`, retryable, reply.status);
}
