/**
 * Requests Node's HTTP parser refuses before fastify sees them (headers over 16 KiB, a request
 * that took too long to arrive, malformed HTTP). Fastify's default answer is its own
 * `{error, message, statusCode}`; this one is the error shape of the paths the request line
 * names, as for unrouted requests (plain when there is none). The connection is closed after
 * it, as Node does: the parser's state is unknown.
 */
import type { FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError, renderError, shapeOfUrl } from './errors.js';

/** The path of the request line in the bytes the parser had, if it got that far. */
function pathOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  return /^[A-Z]+ (\S+) HTTP\//.exec(rawPacket.subarray(0, 8192).toString('latin1'))?.[1] ?? '';
}

function refusalOf(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError(431, 'headers_too_large', 'headers: larger than this server accepts', 'headers');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError(408, 'request_timeout', 'request: not received in time', 'request');
    case 'HPE_INVALID_EOF_STATE':
      return new GatewayError(400, 'invalid_request', 'body: the request ended before all of its body arrived', 'body');
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_STRICT':
      return new GatewayError(400, 'invalid_request', 'body: malformed chunked transfer encoding', 'body');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return new GatewayError(400, 'invalid_request', 'content-length: not valid (or sent with transfer-encoding)', 'content-length');
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return new GatewayError(400, 'invalid_request', 'headers: a header line is malformed', 'headers');
    default:
      return new GatewayError(400, 'invalid_request', 'request: not a valid HTTP request', 'request');
  }
}

/** Fastify calls it bound to the server instance. */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const refusal = refusalOf(err.code);
    const body = JSON.stringify(renderError(shapeOfUrl(this, pathOf(err.rawPacket)), refusal));
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
