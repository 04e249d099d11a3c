/**
 * Registering a user: claim the name (stream `username-<name>`, so a name is taken once, across
 * instances), write the user stream, open the user's account. Three single-stream commands,
 * never a multi-stream transaction; the first two through the one command handler, the account
 * through its own service.
 */
import { streams } from '../../domain/events.js';
import { newId } from '../../domain/ids.js';
import { userDecider } from '../../domain/user.js';
import { usernameDecider } from '../../domain/username.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import type { AccountService } from './account-service.js';
import { executeCommand } from '../commands/command-handler.js';

export interface RegisteredUser {
  userId: string;
  accountId: string;
  position: bigint;
}

/** Refuses (409 `username_taken`) when another user holds the name (in any letter case). */
export async function registerUser(
  deps: { events: EventStore; accounts: AccountService },
  user: { username: string; passwordHash: string; role: 'admin' | 'user'; group: string },
  metadata: EventMetadata,
): Promise<RegisteredUser> {
  const userId = newId('usr', 16);
  const accountId = newId('acc', 16);
  await executeCommand({
    events: deps.events,
    stream: streams.username(user.username),
    decider: usernameDecider,
    command: { type: 'ClaimUsername', data: { userId, username: user.username } },
    metadata,
  });
  await executeCommand({
    events: deps.events,
    stream: streams.user(userId),
    decider: userDecider,
    command: { type: 'RegisterUser', data: { userId, accountId, ...user } },
    metadata,
  });
  const opened = await deps.accounts.execute(accountId, { type: 'OpenAccount', data: { accountId, userId, group: user.group } }, { ...metadata, accountId });
  return { userId, accountId, position: opened.position ?? 0n };
}
