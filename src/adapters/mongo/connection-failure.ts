/**
 * Which errors of the `mongodb` driver mean the server was not reached or cannot serve now, as
 * opposed to an operation it refused: network errors, no server selectable in time, a topology
 * the driver closed after a failed connection (reconnect.ts; the stores refuse calls after their
 * own close before reaching the driver), and the server errors of a node shutting down or
 * stepping down (codes the driver itself retries on: 91, 189, 10107, 11600, 11602, 13435,
 * 13436). Those become StoreUnavailableError.
 */
import { MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { unavailableWhen } from '../translate-rejections.js';

const NODE_GOING_AWAY = new Set([91, 189, 10107, 11600, 11602, 13435, 13436]);

export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError || error instanceof MongoTopologyClosedError) return true;
  if (!(error instanceof MongoServerError)) return false;
  // A bulk write cut off by the driver's own failure wraps that error as its errorResponse.
  const wrapped: unknown = error.errorResponse;
  if (wrapped instanceof Error) return isConnectionFailure(wrapped);
  return typeof error.code === 'number' && NODE_GOING_AWAY.has(error.code);
}

export const unavailableOnConnectionFailure = unavailableWhen('MongoDB', isConnectionFailure);
