/**
 * Server-sent events both ways: `SseReply` writes `text/event-stream` answers (chat chunks,
 * `image_generation.*` events) with the shared writer (src/http/sse.ts), and `readSse` parses
 * an upstream's stream frame by frame (eventsource-parser).
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
import { createParser } from 'eventsource-parser';

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
 * Frames of an upstream `text/event-stream` body, parsed by eventsource-parser (comments
 * skipped, multi-line data joined, a last frame without its blank line kept). A frame longer
 * than `maxFrameChars` (one that never ends, say) fails the read instead of growing.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxFrameChars?: number): AsyncGenerator<SseFrame> {
  const frames: SseFrame[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    maxBufferSize: maxFrameChars,
    onEvent: ({ event, data }) => frames.push({ event, data }),
    // Unknown fields and bad `retry` values are ignored, as an EventSource would.
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') failure ??= new Error(`an event of more than ${maxFrameChars} characters`);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    yield* frames.splice(0);
  }
  // A last frame whose blank line never came is kept (an EventSource would drop it): an upstream
  // that ends its stream without it still delivered the frame whole, or fails to parse it.
  parser.feed(`${decoder.decode()}\n\n`);
  if (failure) throw failure;
  yield* frames.splice(0);
}
