/**
 * Token commands (domain/token.ts) through the one command handler. The channel a token is
 * bound to is looked up in the catalog here and travels in the command, so deciding stays
 * pure; the decider's refusals pass as they are, worded as the token API has always answered
 * them.
 */
import { streams, type TokenSettings } from '../../domain/events.js';
import { newId } from '../../domain/ids.js';
import type { Config } from '../../config.js';
import { tokenDecider, type BoundChannel, type TokenActor, type TokenCommand, type TokenEvent, type TokenState } from '../../domain/token.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import type { Catalog } from '../channels/catalog.js';
import { appendedPosition, executeCommand, type CommandResult } from './command-handler.js';

export interface TokenCommandDeps {
  events: EventStore;
  catalog: Pick<Catalog, 'channel'>;
  /** The default a user's `rateLimitPerMinute` may not exceed; without it (tests) there is none. */
  config?: Pick<Config, 'rateLimitPerMinute'>;
}

/** A new token: its owner's account, the key's hash and tail (the key itself never gets here), what the user set. */
export interface NewToken {
  accountId: string;
  keyHash: string;
  keyTail: string;
  settings: Partial<TokenSettings>;
}

/** What the token aggregate checks settings against besides the command: the channel they name, the default rate limit. */
function settingsFacts(deps: TokenCommandDeps, settings: Partial<TokenSettings>): { channel?: BoundChannel; defaultRateLimitPerMinute?: number } {
  const doc = settings.channelId ? deps.catalog.channel(settings.channelId) : undefined;
  return {
    ...(settings.channelId ? { channel: doc ? { channelId: doc.channelId, groups: doc.groups } : null } : {}),
    ...(deps.config ? { defaultRateLimitPerMinute: deps.config.rateLimitPerMinute } : {}),
  };
}

function execute(deps: TokenCommandDeps, tokenId: string, command: TokenCommand, metadata: EventMetadata): Promise<CommandResult<TokenState, TokenEvent>> {
  return executeCommand({ events: deps.events, stream: streams.token(tokenId), decider: tokenDecider, command, metadata });
}

/** `nowSeconds`: epoch seconds, against which an expiry must lie in the future. */
export async function createToken(
  deps: TokenCommandDeps,
  actor: TokenActor,
  token: NewToken,
  nowSeconds: number,
  metadata: EventMetadata,
): Promise<{ tokenId: string; position: bigint }> {
  const tokenId = newId('tok', 16);
  const command: TokenCommand = { type: 'CreateToken', data: { tokenId, ...token, actor, nowSeconds, ...settingsFacts(deps, token.settings) } };
  return { tokenId, position: appendedPosition(await execute(deps, tokenId, command, metadata)) };
}

/** The position of the change; undefined when no field was given (nothing is appended). */
export async function updateToken(
  deps: TokenCommandDeps,
  actor: TokenActor,
  tokenId: string,
  changes: Partial<TokenSettings>,
  nowSeconds: number,
  metadata: EventMetadata,
): Promise<bigint | undefined> {
  const command: TokenCommand = { type: 'UpdateToken', data: { tokenId, changes, actor, nowSeconds, ...settingsFacts(deps, changes) } };
  return (await execute(deps, tokenId, command, metadata)).position;
}

export async function deleteToken(deps: TokenCommandDeps, actor: TokenActor, tokenId: string, metadata: EventMetadata): Promise<bigint> {
  return appendedPosition(await execute(deps, tokenId, { type: 'DeleteToken', data: { tokenId, actor } }, metadata));
}
