/**
 * Which errors of node-postgres mean the server was not reached or went away (a restart, a
 * failover, a network cut), as opposed to a statement the server refused: those become
 * StoreUnavailableError. SQLSTATE class 08 is "connection exception"; 57P01-57P03 are the
 * server shutting down or starting; 53300 is too many connections. node-postgres reports a
 * closed socket with these messages (pg/lib/client.js, pg-pool/index.js).
 */
import { unavailableWhen } from '../translate-rejections.js';

const SERVER_GOING_AWAY = new Set(['57P01', '57P02', '57P03', '53300']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const CLIENT_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /is not queryable/];

export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || SERVER_GOING_AWAY.has(code) || SOCKET_CODES.has(code))) return true;
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  return CLIENT_MESSAGES.some((pattern) => pattern.test(error.message));
}

/** The error to throw for `error`: StoreUnavailableError for a connection failure, else itself. */
export const unavailableOnConnectionFailure = unavailableWhen('PostgreSQL', isConnectionFailure);
