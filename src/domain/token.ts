/**
 * The token aggregate (stream `token-<tokenId>`): an API key's settings, created, changed and
 * deleted by the user it belongs to.
 *
 * Who may set what: a user's tokens act in the user's group (only an administrator picks
 * another), expire in the future or never, may be bound only to a channel that serves their
 * group, and may only tighten the gateway's per-key rate limit (only an administrator raises it
 * or lifts it). Another user's token, or a deleted one, is treated as missing, except that an
 * administrator may change or revoke any user's token.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf, TokenSettings } from './events.js';
import { Refusal } from './refusal.js';

export type TokenEvent = EventOf<'TokenCreated' | 'TokenUpdated' | 'TokenDeleted'>;

export type TokenState =
  | Readonly<{ status: 'none' }>
  | Readonly<{ status: 'active' | 'deleted'; tokenId: string; userId: string; accountId: string; settings: Readonly<TokenSettings> }>;

/** The signed-in user acting on a token. */
export type TokenActor = Readonly<{ userId: string; role: 'admin' | 'user'; group: string }>;

/** What the catalog knows of the channel a command binds the token to; null: no such channel. */
export type BoundChannel = Readonly<{ channelId: string; groups: readonly string[] }> | null;

/**
 * What a check of settings needs besides them: who acts, now (epoch seconds), the channel the
 * settings name (looked up when they name one), and the gateway's default requests per minute
 * per key (RATE_LIMIT_PER_MINUTE; absent or 0: none).
 */
type SettingsFacts = { actor: TokenActor; nowSeconds: number; channel?: BoundChannel; defaultRateLimitPerMinute?: number };

/** `settings`: what the user gave; the rest takes the defaults of a new token. */
export type CreateToken = Command<
  'CreateToken',
  Pick<EventDataOf<'TokenCreated'>, 'tokenId' | 'accountId' | 'keyHash' | 'keyTail'> & SettingsFacts & { settings: Partial<TokenSettings> }
>;
/** Only the given fields change; none given changes nothing. */
export type UpdateToken = Command<'UpdateToken', SettingsFacts & { tokenId: string; changes: Partial<TokenSettings> }>;
export type DeleteToken = Command<'DeleteToken', { tokenId: string; actor: TokenActor }>;
export type TokenCommand = CreateToken | UpdateToken | DeleteToken;

// ---- decide ----

export function initialTokenState(): TokenState {
  return { status: 'none' };
}

export function decideToken(command: TokenCommand, state: TokenState): TokenEvent[] {
  switch (command.type) {
    case 'CreateToken':
      return create(command.data, state);
    case 'UpdateToken':
      return update(command.data, state);
    case 'DeleteToken':
      ownedBy(state, command.data.tokenId, command.data.actor);
      return [{ type: 'TokenDeleted', data: { tokenId: command.data.tokenId } }];
    default:
      return assertNever(command, 'token command');
  }
}

function create(data: CreateToken['data'], state: TokenState): TokenEvent[] {
  // Token ids are random: only a bug gets here.
  if (state.status !== 'none') throw new Refusal('internal', 'token_exists', `token ${data.tokenId} already exists`);
  const { settings: given, actor } = data;
  checkSettings(given, data);
  const settings: TokenSettings = {
    name: '',
    status: 1,
    expiredTime: -1,
    remainQuota: 0,
    // Without a cap the key spends from the account balance: the account is the limit.
    unlimitedQuota: given.remainQuota === undefined,
    modelLimits: [],
    allowIps: [],
    channelId: null,
    ...given,
    group: given.group || actor.group,
  };
  const { tokenId, accountId, keyHash, keyTail } = data;
  return [{ type: 'TokenCreated', data: { ...settings, tokenId, accountId, userId: actor.userId, keyHash, keyTail } }];
}

function update(data: UpdateToken['data'], state: TokenState): TokenEvent[] {
  ownedBy(state, data.tokenId, data.actor);
  checkSettings(data.changes, data);
  // An empty group means "my own", as on create.
  const changes = data.changes.group === '' ? { ...data.changes, group: data.actor.group } : data.changes;
  return Object.keys(changes).length > 0 ? [{ type: 'TokenUpdated', data: { changes: { ...changes } } }] : [];
}

function ownedBy(state: TokenState, tokenId: string, actor: TokenActor): void {
  // Missing, deleted, or another user's (to anyone but an administrator): the three are not told apart.
  if (state.status !== 'active' || (state.userId !== actor.userId && actor.role !== 'admin'))
    throw new Refusal('not_found', 'not_found', `id: no token ${tokenId}`, 'id');
}

/**
 * The channel is checked against the group the settings give, else the actor's own: an
 * update that names a channel but no group is checked against the actor's group.
 */
function checkSettings(s: Partial<TokenSettings>, { actor, nowSeconds, channel, defaultRateLimitPerMinute }: SettingsFacts): void {
  if (s.group !== undefined && s.group !== '' && s.group !== actor.group && actor.role !== 'admin') {
    throw new Refusal('forbidden', 'forbidden', `group: only an administrator may set a group other than ${actor.group}`, 'group');
  }
  if (s.expiredTime !== undefined && s.expiredTime !== -1 && s.expiredTime <= nowSeconds) {
    throw new Refusal('invalid', 'invalid_request', 'expired_time: must be -1 (never) or a time in the future', 'expired_time');
  }
  if (s.channelId) {
    const known = channel?.channelId === s.channelId ? channel : null;
    const group = s.group || actor.group;
    if (!known || (known.groups.length > 0 && !known.groups.includes(group))) {
      throw new Refusal('invalid', 'invalid_request', `channel_id: no channel ${s.channelId} serves group ${group}`, 'channel_id');
    }
  }
  // The default protects the gateway from one key's flood: a user may ask for fewer (a leaked
  // key's damage bounded), not for more; 0 is no limit at all.
  const limit = s.rateLimitPerMinute;
  const defaultLimit = defaultRateLimitPerMinute ?? 0;
  if (typeof limit === 'number' && defaultLimit > 0 && (limit === 0 || limit > defaultLimit) && actor.role !== 'admin') {
    throw new Refusal(
      'forbidden',
      'forbidden',
      `rate_limit_per_minute: only an administrator may set more than the default ${defaultLimit} requests per minute, or 0 (no limit)`,
      'rate_limit_per_minute',
    );
  }
}

// ---- evolve ----

/** Never throws on a recorded event: events that do not apply (or other streams') are ignored. */
export function evolveToken(state: TokenState, event: DomainEvent): TokenState {
  switch (event.type) {
    case 'TokenCreated': {
      if (state.status !== 'none') return state;
      const { tokenId, userId, accountId, keyHash: _keyHash, keyTail: _keyTail, ...settings } = event.data;
      return { status: 'active', tokenId, userId, accountId, settings };
    }
    case 'TokenUpdated':
      return state.status === 'active' ? { ...state, settings: { ...state.settings, ...event.data.changes } } : state;
    case 'TokenDeleted':
      return state.status === 'active' ? { ...state, status: 'deleted' } : state;
    default:
      return state;
  }
}

export const tokenDecider: Decider<TokenState, TokenCommand, TokenEvent> = {
  decide: decideToken,
  evolve: evolveToken,
  initialState: initialTokenState,
};
