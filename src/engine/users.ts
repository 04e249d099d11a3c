/**
 * Registering a user: claim the name (stream `username-<name>`, appended with no_stream so
 * a name is taken once, across instances), write the user stream, open the user's account.
 * Three single-stream appends, never a multi-stream transaction.
 */
import { streams } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import type { EventMetadata, EventStore } from '../ports/event-store.js';
import { WrongExpectedRevisionError } from '../ports/event-store.js';
import type { AccountService } from './account-service.js';
import { appendEvents } from './append.js';

export class UsernameTakenError extends Error {
  constructor(readonly username: string) {
    super(`username ${username} is already taken`);
  }
}

export interface RegisteredUser {
  userId: string;
  accountId: string;
  position: bigint;
}

export async function registerUser(
  deps: { events: EventStore; accounts: AccountService },
  user: { username: string; passwordHash: string; role: 'admin' | 'user'; group: string },
  metadata: EventMetadata,
): Promise<RegisteredUser> {
  const userId = newId('usr', 16);
  const accountId = newId('acc', 16);
  try {
    await appendEvents(deps.events, streams.username(user.username), [{ type: 'UsernameClaimed', data: { userId, username: user.username } }], {
      expectedRevision: 'no_stream',
      metadata,
    });
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new UsernameTakenError(user.username);
    throw err;
  }
  await appendEvents(deps.events, streams.user(userId), [{ type: 'UserRegistered', data: { userId, accountId, ...user } }], {
    expectedRevision: 'no_stream',
    metadata,
  });
  const opened = await deps.accounts.execute(accountId, { type: 'OpenAccount', data: { accountId, userId, group: user.group } }, { ...metadata, accountId });
  return { userId, accountId, position: opened.position ?? 0n };
}
