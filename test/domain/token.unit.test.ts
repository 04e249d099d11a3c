import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import type { TokenSettings } from '../../src/domain/events.js';
import {
  decideToken,
  evolveToken,
  initialTokenState,
  tokenDecider,
  type BoundChannel,
  type TokenActor,
  type TokenCommand,
  type TokenEvent,
  type TokenState,
} from '../../src/domain/token.js';
import { refused } from '../support/refused.js';

const NOW = 1_700_000_000;
const alice: TokenActor = { userId: 'u-alice', role: 'user', group: 'default' };
const bob: TokenActor = { userId: 'u-bob', role: 'user', group: 'default' };
const admin: TokenActor = { userId: 'u-admin', role: 'admin', group: 'default' };

const create = (settings: Partial<TokenSettings> = {}, actor = alice, channel?: BoundChannel): TokenCommand => ({
  type: 'CreateToken',
  data: { tokenId: 'tok1', accountId: 'acc1', keyHash: 'h', keyTail: 'abcd', settings, actor, nowSeconds: NOW, ...(channel === undefined ? {} : { channel }) },
});
const update = (changes: Partial<TokenSettings>, actor = alice): TokenCommand => ({
  type: 'UpdateToken',
  data: { tokenId: 'tok1', changes, actor, nowSeconds: NOW },
});
const remove = (actor = alice): TokenCommand => ({ type: 'DeleteToken', data: { tokenId: 'tok1', actor } });

function run(...commands: TokenCommand[]): { state: TokenState; events: TokenEvent[] } {
  let state = initialTokenState();
  const events: TokenEvent[] = [];
  for (const c of commands) {
    const decided = decideToken(c, state);
    events.push(...decided);
    state = decided.reduce(evolveToken, state);
  }
  return { state, events };
}

describe('token decider', () => {
  it('creates with the defaults of a new token: no cap means unlimited, the group is the user’s', () => {
    const [event] = decideToken(create({ name: 'k' }), initialTokenState());
    expect(event).toEqual({
      type: 'TokenCreated',
      data: {
        name: 'k',
        status: 1,
        expiredTime: -1,
        remainQuota: 0,
        unlimitedQuota: true,
        modelLimits: [],
        allowIps: [],
        channelId: null,
        group: 'default',
        tokenId: 'tok1',
        accountId: 'acc1',
        userId: 'u-alice',
        keyHash: 'h',
        keyTail: 'abcd',
      },
    });
    const capped = decideToken(create({ remainQuota: 500, group: '' }), initialTokenState())[0]!;
    expect(capped.type === 'TokenCreated' && [capped.data.unlimitedQuota, capped.data.remainQuota, capped.data.group]).toEqual([false, 500, 'default']);
  });

  it('refuses a group other than the user’s unless an administrator sets it', () => {
    expect(() => decideToken(create({ group: 'vip' }), initialTokenState())).toThrow(refused('forbidden', 'forbidden', 'group'));
    expect(() => decideToken(create({ group: 'vip' }), initialTokenState())).toThrow('only an administrator may set a group other than default');
    expect(decideToken(create({ group: 'vip' }, admin), initialTokenState())).toHaveLength(1);
  });

  it('refuses an expiry that is not -1 and not in the future', () => {
    expect(() => decideToken(create({ expiredTime: NOW }), initialTokenState())).toThrow(refused('invalid', 'invalid_request', 'expired_time'));
    expect(decideToken(create({ expiredTime: -1 }), initialTokenState())).toHaveLength(1);
    expect(decideToken(create({ expiredTime: NOW + 1 }), initialTokenState())).toHaveLength(1);
  });

  it('binds to a channel only when the catalog has it and it serves the token’s group', () => {
    const serving = { channelId: 'ch1', groups: ['default'] };
    expect(decideToken(create({ channelId: 'ch1' }, alice, serving), initialTokenState())).toHaveLength(1);
    expect(decideToken(create({ channelId: 'ch1' }, alice, { channelId: 'ch1', groups: [] }), initialTokenState())).toHaveLength(1);
    expect(() => decideToken(create({ channelId: 'ch1' }, alice, null), initialTokenState())).toThrow(refused('invalid', 'invalid_request', 'channel_id'));
    // A lookup of another channel than the one named is no lookup of it.
    expect(() => decideToken(create({ channelId: 'ch1' }, alice, { channelId: 'ch2', groups: [] }), initialTokenState())).toThrow(
      'no channel ch1 serves group default',
    );
    expect(() => decideToken(create({ channelId: 'ch1', group: 'vip' }, admin, serving), initialTokenState())).toThrow('no channel ch1 serves group vip');
  });

  it('refuses to create over an existing stream', () => {
    const { state } = run(create());
    expect(() => decideToken(create(), state)).toThrow(refused('internal', 'token_exists'));
  });

  it('updates only the given fields; none given decides []; an empty group means the user’s own', () => {
    const { state } = run(create({ name: 'a' }));
    expect(decideToken(update({ name: 'b' }), state)).toEqual([{ type: 'TokenUpdated', data: { changes: { name: 'b' } } }]);
    expect(decideToken(update({}), state)).toEqual([]);
    expect(decideToken(update({ group: '' }), state)).toEqual([{ type: 'TokenUpdated', data: { changes: { group: 'default' } } }]);
    const after = run(create({ name: 'a' }), update({ name: 'b', remainQuota: 7 })).state;
    expect(after.status === 'active' && [after.settings.name, after.settings.remainQuota]).toEqual(['b', 7]);
  });

  it('another user’s token, a missing one and a deleted one are all not found, checked before the settings', () => {
    const { state } = run(create());
    for (const [command, on] of [
      [update({ name: 'x' }, bob), state],
      [update({ group: 'vip' }, bob), state],
      [remove(bob), state],
      [update({ name: 'x' }), initialTokenState()],
      [remove(), initialTokenState()],
      [remove(), run(create(), remove()).state],
      [update({ name: 'x' }), run(create(), remove()).state],
    ] as const) {
      expect(() => decideToken(command, on)).toThrow(refused('not_found', 'not_found', 'id'));
    }
  });

  it('deletes the owner’s token', () => {
    const { state, events } = run(create(), remove());
    expect(events.at(-1)).toEqual({ type: 'TokenDeleted', data: { tokenId: 'tok1' } });
    expect(state.status).toBe('deleted');
  });

  it('folds to the same state as deciding, and ignores other streams’ events', () => {
    const { state, events } = run(create({ name: 'a' }), update({ name: 'b' }));
    const noise = { type: 'ChannelDeleted', data: { channelId: 'c' } } as const;
    expect(fold(tokenDecider, [noise, ...events])).toEqual(state);
    expect(fold(tokenDecider, events)).toEqual(state);
  });
});
