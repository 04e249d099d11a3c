/**
 * Which errors of `@eventstore/db-client` mean the server was not reached or cannot serve now,
 * as opposed to a request it refused: gRPC UNAVAILABLE (no connection, a restart), a deadline
 * passed without an answer, and a follower's "not leader" during an election. Those become
 * StoreUnavailableError; WrongExpectedVersion and the rest stay what they are.
 */
import { DeadlineExceededError, NotLeaderError, UnavailableError } from '@eventstore/db-client';
import { unavailableWhen } from '../translate-rejections.js';

export function isConnectionFailure(error: unknown): boolean {
  return error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof NotLeaderError;
}

export const unavailableOnConnectionFailure = unavailableWhen('EventStoreDB', isConnectionFailure);
