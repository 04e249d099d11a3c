/** A token's requests per minute: users may tighten the gateway's default, only administrators raise or lift it. */
import { describe, expect, it } from 'vitest';
import { eventSchemas, type TokenSettings } from '../../src/domain/events.js';
import { decideToken, evolveToken, initialTokenState, type TokenActor, type TokenCommand, type TokenState } from '../../src/domain/token.js';
import { refused } from '../support/refused.js';

const NOW = 1_700_000_000;
const alice: TokenActor = { userId: 'u-alice', role: 'user', group: 'default' };
const admin: TokenActor = { userId: 'u-admin', role: 'admin', group: 'default' };

const create = (settings: Partial<TokenSettings>, actor: TokenActor, defaultRateLimitPerMinute?: number): TokenCommand => ({
  type: 'CreateToken',
  data: {
    tokenId: 'tok1',
    accountId: 'acc1',
    keyHash: 'h',
    keyTail: 'abcd',
    settings,
    actor,
    nowSeconds: NOW,
    ...(defaultRateLimitPerMinute !== undefined ? { defaultRateLimitPerMinute } : {}),
  },
});
const update = (changes: Partial<TokenSettings>, actor: TokenActor, defaultRateLimitPerMinute?: number): TokenCommand => ({
  type: 'UpdateToken',
  data: { tokenId: 'tok1', changes, actor, nowSeconds: NOW, ...(defaultRateLimitPerMinute !== undefined ? { defaultRateLimitPerMinute } : {}) },
});

function created(settings: Partial<TokenSettings>, actor: TokenActor, defaultLimit?: number): TokenState {
  return decideToken(create(settings, actor, defaultLimit), initialTokenState()).reduce(evolveToken, initialTokenState());
}

describe('token rate limit setting', () => {
  it('is absent from a token created without it (the gateway default applies), and recorded when given', () => {
    const [plain] = decideToken(create({ name: 'k' }, alice, 60), initialTokenState());
    expect(plain?.data).not.toHaveProperty('rateLimitPerMinute');
    expect(plain?.data).not.toHaveProperty('defaultRateLimitPerMinute');
    const [limited] = decideToken(create({ rateLimitPerMinute: 30 }, alice, 60), initialTokenState());
    expect(limited?.data).toMatchObject({ rateLimitPerMinute: 30 });
  });

  it('a user may set at most the default, and not 0 (none), while a default is on', () => {
    expect(() => decideToken(create({ rateLimitPerMinute: 61 }, alice, 60), initialTokenState())).toThrow(
      refused('forbidden', 'forbidden', 'rate_limit_per_minute'),
    );
    expect(() => decideToken(create({ rateLimitPerMinute: 0 }, alice, 60), initialTokenState())).toThrow(
      refused('forbidden', 'forbidden', 'rate_limit_per_minute'),
    );
    const state = created({}, alice, 60);
    expect(() => decideToken(update({ rateLimitPerMinute: 1000 }, alice, 60), state)).toThrow(refused('forbidden', 'forbidden', 'rate_limit_per_minute'));
    expect(decideToken(update({ rateLimitPerMinute: 60 }, alice, 60), state)).toHaveLength(1);
    // null goes back to the default.
    expect(decideToken(update({ rateLimitPerMinute: null }, alice, 60), state)).toEqual([
      { type: 'TokenUpdated', data: { changes: { rateLimitPerMinute: null } } },
    ]);
  });

  it('with no default (0 or unknown) a user may set any limit; an administrator may always', () => {
    expect(decideToken(create({ rateLimitPerMinute: 5000 }, alice, 0), initialTokenState())).toHaveLength(1);
    expect(decideToken(create({ rateLimitPerMinute: 0 }, alice), initialTokenState())).toHaveLength(1);
    const state = created({}, admin, 60);
    expect(decideToken(update({ rateLimitPerMinute: 0 }, admin, 60), state)).toHaveLength(1);
    expect(decideToken(update({ rateLimitPerMinute: 100_000 }, admin, 60), state)).toHaveLength(1);
  });

  it('token events recorded before the setting existed still parse', () => {
    const old = {
      name: 'k',
      status: 1,
      expiredTime: -1,
      remainQuota: 0,
      unlimitedQuota: true,
      modelLimits: [],
      group: 'default',
      allowIps: [],
      channelId: null,
    };
    expect(eventSchemas.TokenCreated.safeParse({ ...old, tokenId: 't', accountId: 'a', userId: 'u', keyHash: 'h', keyTail: 'abcd' }).success).toBe(true);
    expect(eventSchemas.TokenUpdated.safeParse({ changes: { name: 'renamed' } }).success).toBe(true);
    expect(eventSchemas.TokenUpdated.safeParse({ changes: { rateLimitPerMinute: -1 } }).success).toBe(false);
  });
});
