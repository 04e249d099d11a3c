/**
 * Server-sent events both ways: `SseReply` writes `text/event-stream` answers (chat chunks,
 * `image_generation.*` events) with the shared writer (src/http/sse.ts), and `readSse` parses
 * an upstream's stream frame by frame.
 *
 * The answer starts lazily, at the first frame (or keep-alive comment): until then a refusal
 * (quota, upstream rejection) is still an ordinary JSON error body (`{code, message, error}`,
 * which OpenAI-style clients raise) with its HTTP status; after it, an error is the frame
 * `data: {"error":{"code","message"}}`. A client that goes away only stops the writing; the
 * task goes on and is settled or released.
 */
import type { FastifyReply } from 'fastify';
import { GatewayError, normalizeError } from '../../http/errors.js';
import { HEARTBEAT_MS, SseWriter } from '../../http/sse.js';

export const KEEP_ALIVE_MS = HEARTBEAT_MS;

export class SseReply {
  private readonly writer: SseWriter;

  constructor(private readonly reply: FastifyReply) {
    this.writer = new SseWriter(reply);
  }

  get isStarted(): boolean {
    return this.writer.isOpen;
  }

  /** A `data:` frame, with an `event:` line when named. */
  send(data: unknown, event?: string): void {
    this.writer.send({ event, data: JSON.stringify(data) });
  }

  done(): void {
    this.writer.send({ data: '[DONE]' });
  }

  /** Comment frames while the upstream works, so idle timeouts on the way do not cut the call. */
  keepAlive(everyMs = KEEP_ALIVE_MS): void {
    this.writer.heartbeat(everyMs);
  }

  end(): void {
    this.writer.end();
  }

  /** Before the answer started: rethrows (the route's error handler answers). After: an error frame. */
  fail(error: unknown, event?: string): void {
    if (!this.writer.isOpen) {
      // A keep-alive that has not fired yet must not open the stream after the error answer.
      this.writer.end();
      throw error;
    }
    const err: GatewayError = normalizeError(error);
    // As sendError (http/errors.ts): only the gateway's own fault is an error; an upstream's is logged where it failed.
    if (err.status === 500) this.reply.log.error({ err: error }, 'stream failed');
    this.send({ error: { code: err.code, message: err.message } }, event);
    this.end();
  }
}

export interface SseFrame {
  event: string | undefined;
  data: string;
}

/**
 * Frames of an upstream `text/event-stream` body (comments skipped, multi-line data joined).
 * A frame longer than `maxFrameBytes` (never ending, say) fails the read instead of growing.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxFrameBytes = Number.POSITIVE_INFINITY): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const match = /\r?\n\r?\n/.exec(buffer);
      if (!match) break;
      const block = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      const frame = parseFrame(block);
      if (frame) yield frame;
    }
    // What is left is one unfinished frame.
    if (buffer.length > maxFrameBytes) throw new Error(`an event of more than ${maxFrameBytes} bytes`);
  }
  const last = parseFrame(buffer + decoder.decode());
  if (last) yield last;
}

function parseFrame(block: string): SseFrame | undefined {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
  }
  return data.length > 0 ? { event, data: data.join('\n') } : undefined;
}
