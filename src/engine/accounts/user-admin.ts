/**
 * Administering users (domain/user.ts) through the one command handler: disable, enable,
 * delete, password, group. A group change also moves the user's keys that were in the group
 * left (a key set to another group by an administrator stays there): one token command each,
 * after the user's; a change retried after a crash between them moves the rest (the last
 * change on the stream says which group was left).
 */
import { streams } from '../../domain/events.js';
import { userDecider, type UserCommand, type UserState } from '../../domain/user.js';
import type { TokenActor } from '../../domain/token.js';
import type { EventMetadata } from '../../ports/event-store.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import { VIEWS } from '../../../projections/views.js';
import { executeCommand, type CommandResult } from '../commands/command-handler.js';
import { updateToken, type TokenCommandDeps } from '../commands/token-commands.js';
import type { UserEvent } from '../../domain/user.js';
import type { ViewStore } from '../../ports/view-store.js';

export function executeUserCommand(
  deps: Pick<TokenCommandDeps, 'events'>,
  userId: string,
  command: UserCommand,
  metadata: EventMetadata,
): Promise<CommandResult<UserState, UserEvent>> {
  return executeCommand({ events: deps.events, stream: streams.user(userId), decider: userDecider, command, metadata });
}

/** The position of the last event appended (the user's, or a key's), undefined when nothing changed. */
export async function changeUserGroup(
  deps: TokenCommandDeps & { views: ViewStore },
  admin: TokenActor,
  userId: string,
  group: string,
  nowSeconds: number,
  metadata: EventMetadata,
): Promise<bigint | undefined> {
  const result = await executeUserCommand(deps, userId, { type: 'ChangeGroup', data: { group, by: admin.userId } }, metadata);
  let position = result.position;
  const left = result.events.find((e) => e.type === 'UserGroupChanged')?.data.previous ?? (await lastGroupLeft(deps, userId, group));
  if (left === undefined) return position;
  const keys = await deps.views.find<TokenDoc>(VIEWS.tokens, { userId }, { limit: 100_000 });
  for (const { doc } of keys) {
    if (doc.group !== left) continue;
    position = (await updateToken(deps, admin, doc.tokenId, { group }, nowSeconds, { ...metadata, accountId: doc.accountId })) ?? position;
  }
  return position;
}

/** The group the user's last change into `group` left, if that is their last change. */
async function lastGroupLeft(deps: Pick<TokenCommandDeps, 'events'>, userId: string, group: string): Promise<string | undefined> {
  const changes = (await deps.events.readStream(streams.user(userId))).filter((e) => e.type === 'UserGroupChanged');
  const last = changes.at(-1)?.data as { group: string; previous: string } | undefined;
  return last?.group === group ? last.previous : undefined;
}
