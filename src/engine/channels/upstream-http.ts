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
 * - A connection closed or reset before any answer is sent again once, at once, when that is
 *   safe (a GET, or a submit with its Idempotency-Key): the usual cause is a kept-alive
 *   connection the upstream closed just as it was reused, not the upstream failing.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { retry, type Backoff } from '../../lib/backoff.js';
import { UpstreamError } from './upstream.js';

/**
 * Every upstream call of the process goes through one kept-alive pool, with undici's `request`
 * rather than `fetch`: fetch builds WHATWG Request, Headers, Response and stream objects around
 * the same client, and cost about three times the CPU per call (a POST answered with a small
 * JSON body at 32 at a time: 400-800 against 125-250 µs, bench/README.md). Redirects are not
 * followed, and no compressed encoding is asked for, so the byte limit is the bytes received.
 */
const upstreamAgent = new Agent();

/** The one re-send of a request whose connection was closed before any answer: at once. */
const RESEND_BACKOFF: Backoff = { initialMs: 0 };
/** Connection errors that mean the connection was closed or reset under the request. */
const CLOSED_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** The connection error's code (`UND_ERR_SOCKET`, `ECONNRESET`, …), on the error or its cause, if it has one. */
function causeCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  for (const e of [err, err.cause]) {
    const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function closedBeforeAnswer(err: unknown): boolean {
  return CLOSED_CONNECTION.has(causeCode(err) ?? '');
}

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
  /** Sent as the `Accept` header (a streamed call's `text/event-stream`). */
  accept?: string;
}

/** An upstream answer whose headers have arrived; its body is not read yet. */
export interface OpenedUpstream {
  status: number;
  /** A header of the answer (name in lower case), several values joined with ", ". */
  header(name: string): string | undefined;
  /** Leaves the body unread: the connection is closed rather than drained. */
  discard(): void;
  /** The answer's body, read through bodyChunks (which ends it with the signal). */
  body: Dispatcher.ResponseData['body'];
  /** The call's deadline and the caller's signal in one: aborted, the body's chunks end (bodyChunks). */
  signal: AbortSignal;
  /** Why the call failed past this point, for a failure's reason: the deadline, the task's own time, or the connection error. */
  why(err: unknown): string;
}

/**
 * Sends one upstream request under the call's deadline (the re-send above included) and
 * resolves once its headers arrive; the body is the caller's to read, under the same deadline.
 * A redirect is the upstream's failure, as an unreachable one is: it is not followed.
 */
export async function openUpstream(method: 'GET' | 'POST', url: string, options: UpstreamCallOptions): Promise<OpenedUpstream> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const why = (err: unknown): string =>
    timeout.aborted ? `no complete answer within ${timeoutMs} ms` : options.signal?.aborted ? 'the task ran out of time' : connectionFailure(err);
  // A connection the other side closed before any answer (a kept-alive socket the upstream shut
  // as it was reused: the race a loop lagging under load widens) is sent once more on another
  // connection, when sending the request twice is safe: a GET, or a submit carrying its Idempotency-Key.
  const mayResend = method === 'GET' || options.idempotencyKey !== undefined;
  // Built once: a re-send sends the same request.
  const requestOptions = {
    method,
    headers: {
      authorization: `Bearer ${options.key}`,
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.accept !== undefined ? { accept: options.accept } : {}),
      ...(options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {}),
    },
    body: options.body === undefined ? null : JSON.stringify(options.body),
    signal,
    dispatcher: upstreamAgent,
  };
  let res: Dispatcher.ResponseData;
  try {
    res = await retry(() => request(url, requestOptions), {
      backoff: RESEND_BACKOFF,
      retryIf: (err, attempt) => mayResend && attempt === 0 && !signal.aborted && closedBeforeAnswer(err),
    });
  } catch (err) {
    // Connection refused, reset, DNS failure or timeout: another channel may do better.
    throw new UpstreamError(`upstream unreachable: ${why(err)}`, true);
  }
  const { statusCode: status, headers, body } = res;
  const discard = () => dropBody(body);
  if (status >= 300 && status < 400) {
    discard();
    throw new UpstreamError(`upstream unreachable: it answered ${status}, a redirect, which is not followed`, true);
  }
  const header = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return { status, header, discard, body, signal, why };
}

/** An opened answer's body, read within `maxBytes` and parsed as JSON when it is JSON (kept as text when not). */
export async function readUpstreamReply(opened: OpenedUpstream, maxBytes = MAX_UPSTREAM_ANSWER_BYTES): Promise<UpstreamReply> {
  let text: string;
  try {
    text = await readBody(opened, maxBytes);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError(`upstream answer broke off: ${opened.why(err)}`, true);
  }
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* keep the text */
  }
  return { status: opened.status, body };
}

export async function upstreamJson(method: 'GET' | 'POST', url: string, options: UpstreamCallOptions): Promise<UpstreamReply> {
  return readUpstreamReply(await openUpstream(method, url, options), options.maxBytes);
}

/**
 * The body's chunks as they arrive, ended by the call's signal: the stream is destroyed when the
 * signal aborts (decision 0157: a body that trickles a byte now and then must not outlive the
 * deadline or the caller's abort, holding its connection and its channel's poll slot). Leaving
 * early (over a limit, a parse error, the caller's `break`) destroys the rest of the body too.
 */
export async function* bodyChunks(opened: OpenedUpstream): AsyncGenerator<Uint8Array> {
  const { body, signal } = opened;
  const destroy = () => dropBody(body, signal.reason);
  signal.addEventListener('abort', destroy, { once: true });
  let ended = false;
  try {
    signal.throwIfAborted();
    for await (const chunk of body) {
      signal.throwIfAborted();
      yield chunk as Uint8Array;
    }
    signal.throwIfAborted();
    ended = true;
  } finally {
    signal.removeEventListener('abort', destroy);
    if (!ended) dropBody(body);
  }
}

/**
 * Ends a body that will not be read to its end (its connection is closed, not drained). undici
 * reports the unread rest as an 'error' on the stream, with no one left to listen: ignored here.
 */
function dropBody(body: OpenedUpstream['body'], reason?: unknown): void {
  body.on('error', () => undefined);
  body.destroy(reason instanceof Error ? reason : undefined);
}

/** The body as text, read chunk by chunk and abandoned past `maxBytes`. */
async function readBody(opened: OpenedUpstream, maxBytes: number): Promise<string> {
  const tooLarge = (size: string): UpstreamError => new UpstreamError(`upstream answer of ${size} is over the ${maxBytes} byte limit`, true);
  const declared = Number(opened.header('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    opened.discard();
    throw tooLarge(`${declared} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of bodyChunks(opened)) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(`more than ${maxBytes} bytes`);
    chunks.push(chunk);
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

/**
 * The connection error in words (refused, reset, closed by the other side, a connect timeout)
 * with its code where the message does not name it, so an operator reading the task's reason or
 * the log sees which one. An error with a cause (a wrapped one) names both.
 */
function connectionFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = causeCode(err);
  const message = err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
  return `${message}${code !== undefined && !message.includes(code) ? ` (${code})` : ''}`;
}
