/**
 * Server-sent events on a fastify reply: the one writer of every `text/event-stream` answer
 * (streamed synchronous image answers, the `/api/events/stream` task events).
 *
 * The stream opens at the first write (or `open()`): the reply is hijacked, so fastify's
 * `onSend` hooks no longer run, and the 200 carries the request id itself. A client that goes
 * away only stops the writing (writes become no-ops); `onClose` tells the producer, and
 * `drained()` lets a producer faster than the client wait instead of buffering without bound.
 */
import type { FastifyReply } from 'fastify';

/** Comment frames this often keep idle timeouts of proxies on the way from cutting the stream. */
export const HEARTBEAT_MS = 15_000;

export interface SseEvent {
  /** The `id:` line: what a reconnecting EventSource sends back as `Last-Event-ID`. */
  id?: string | number | bigint;
  /** The `event:` line; without one the client sees a `message` event. */
  event?: string;
  /** The payload: each of its lines becomes a `data:` line. */
  data: string;
}

/** A field on one line: a line break in an id or event name would end the field early. */
const oneLine = (value: string): string => value.replace(/[\r\n]/g, '');

export class SseWriter {
  private opened = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(private readonly reply: FastifyReply) {}

  get isOpen(): boolean {
    return this.opened;
  }

  /** Ended, or the client went away: nothing written now reaches anyone. */
  get isClosed(): boolean {
    const raw = this.reply.raw;
    return raw.destroyed || raw.writableEnded;
  }

  /** Takes the answer over from fastify and sends the 200 with the stream's headers (once). */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // nginx would otherwise buffer the stream and deliver it in lumps.
      'x-accel-buffering': 'no',
      'x-request-id': String(this.reply.request.id),
    });
  }

  /** False when the client's buffer is full (see `drained`) or the client is gone. */
  send(event: SseEvent): boolean {
    const id = event.id === undefined ? '' : `id: ${oneLine(String(event.id))}\n`;
    const name = event.event ? `event: ${oneLine(event.event)}\n` : '';
    const data = event.data
      .split(/\r\n|\r|\n/)
      .map((line) => `data: ${line}\n`)
      .join('');
    return this.write(`${id}${name}${data}\n`);
  }

  /** A comment frame (`: text`), which clients ignore. */
  comment(text: string): boolean {
    return this.write(`: ${oneLine(text)}\n\n`);
  }

  /** `: keep-alive` comments until `end`; a second call changes nothing. */
  heartbeat(everyMs = HEARTBEAT_MS): void {
    if (this.heartbeatTimer) return;
    this.heartbeatTimer = setInterval(() => this.comment('keep-alive'), everyMs);
    this.heartbeatTimer.unref();
  }

  /** Resolves once the client has taken what was buffered, or went away. */
  drained(): Promise<void> {
    const raw = this.reply.raw;
    if (this.isClosed || !raw.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    });
  }

  /**
   * Calls `gone` when the connection closes (at once if it already has); returns what stops
   * listening. It also fires after `end`, where stopping the producer again must be harmless.
   */
  onClose(gone: () => void): () => void {
    const raw = this.reply.raw;
    if (raw.destroyed) {
      gone();
      return () => {};
    }
    raw.once('close', gone);
    return () => void raw.off('close', gone);
  }

  /** Stops the heartbeat and ends the answer when it was opened and the client is still there. */
  end(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    if (this.opened && !this.isClosed) this.reply.raw.end();
  }

  private write(text: string): boolean {
    this.open();
    if (this.isClosed) return false;
    return this.reply.raw.write(text);
  }
}
