/**
 * Login sessions on the user's stream (domain/user.ts) through the one command handler. The
 * session id and its hash are made at the HTTP edge; only the hash gets here.
 */
import { streams } from '../../domain/events.js';
import { userDecider, type UserCommand } from '../../domain/user.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { executeCommand } from './command-handler.js';

async function execute(events: EventStore, userId: string, command: UserCommand, metadata: EventMetadata): Promise<bigint | undefined> {
  return (await executeCommand({ events, stream: streams.user(userId), decider: userDecider, command, metadata })).position;
}

/** The position of the start; undefined when this session was already started (a retry). */
export async function startSession(
  events: EventStore,
  userId: string,
  session: { sessionHash: string; expiresAt: number },
  metadata: EventMetadata,
): Promise<bigint | undefined> {
  return execute(events, userId, { type: 'StartSession', data: session }, metadata);
}

/** The position of the end; undefined when the session was not open (already ended). */
export async function endSession(events: EventStore, userId: string, sessionHash: string, metadata: EventMetadata): Promise<bigint | undefined> {
  return execute(events, userId, { type: 'EndSession', data: { sessionHash } }, metadata);
}
