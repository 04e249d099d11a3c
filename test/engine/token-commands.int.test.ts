import { describe, expect, it } from 'vitest';
import { createToken, deleteToken, updateToken, type NewToken } from '../../src/engine/commands/token-commands.js';
import { normalizeError } from '../../src/http/errors.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ChannelDoc } from '../../projections/channels.js';
import { useTempEventStore } from '../support/temp-event-store.js';

const NOW = 1_700_000_000;
const meta = () => ({ at: new Date(NOW * 1000).toISOString() });
const alice = { userId: 'u-alice', role: 'user' as const, group: 'default' };
const bob = { userId: 'u-bob', role: 'user' as const, group: 'default' };
const vipChannel: ChannelDoc = {
  channelId: 'ch-vip',
  name: 'vip',
  family: 'image',
  baseUrl: '/_sim',
  key: '',
  models: ['m'],
  modelMapping: {},
  groups: ['vip'],
  priority: 0,
  weight: 1,
  status: 1,
  createdAt: '',
  updatedAt: '',
};
const catalog = { channel: (id: string) => (id === vipChannel.channelId ? vipChannel : undefined) };
const newToken = (settings: NewToken['settings'] = {}): NewToken => ({ accountId: 'acc', keyHash: 'hash', keyTail: 'tail', settings });

let events: EventStore;
useTempEventStore((s) => (events = s));

/** How the API answers what the promise was refused with: status, code, message, field. */
async function answer(promise: Promise<unknown>) {
  const err = normalizeError(
    await promise.then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
  return { status: err.status, code: err.code, message: err.message, param: err.param };
}

describe('token commands', () => {
  it('create appends TokenCreated on a new stream and returns where it went', async () => {
    const { tokenId, position } = await createToken({ events, catalog }, alice, newToken({ name: 'k' }), NOW, meta());
    const [created] = await events.readStream(`token-${tokenId}`);
    expect(created).toMatchObject({
      type: 'TokenCreated',
      position,
      data: { tokenId, userId: 'u-alice', accountId: 'acc', name: 'k', group: 'default', unlimitedQuota: true },
    });
  });

  it('refuses as the token API always has: same status, code, message and field', async () => {
    const deps = { events, catalog };
    expect(await answer(createToken(deps, alice, newToken({ group: 'vip' }), NOW, meta()))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'group: only an administrator may set a group other than default',
      param: 'group',
    });
    expect(await answer(createToken(deps, alice, newToken({ expiredTime: NOW }), NOW, meta()))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'expired_time: must be -1 (never) or a time in the future',
      param: 'expired_time',
    });
    expect(await answer(createToken(deps, alice, newToken({ channelId: 'ch-vip' }), NOW, meta()))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'channel_id: no channel ch-vip serves group default',
      param: 'channel_id',
    });
    expect(await answer(createToken(deps, alice, newToken({ channelId: 'ch-nope' }), NOW, meta()))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'channel_id: no channel ch-nope serves group default',
      param: 'channel_id',
    });
    const { tokenId } = await createToken(deps, alice, newToken(), NOW, meta());
    const notFound = { status: 404, code: 'not_found', message: `id: no token ${tokenId}`, param: 'id' };
    expect(await answer(updateToken(deps, bob, tokenId, { name: 'x' }, NOW, meta()))).toEqual(notFound);
    expect(await answer(deleteToken(deps, bob, tokenId, meta()))).toEqual(notFound);
    expect(await answer(updateToken(deps, alice, 'tok_missing', { name: 'x' }, NOW, meta()))).toEqual({ ...notFound, message: 'id: no token tok_missing' });
    // Only the one TokenCreated was appended.
    expect((await events.readStream(`token-${tokenId}`)).map((e) => e.type)).toEqual(['TokenCreated']);
  });

  it('update appends only when a field is given; after delete the token is gone', async () => {
    const deps = { events, catalog };
    const { tokenId } = await createToken(deps, alice, newToken(), NOW, meta());
    expect(await updateToken(deps, alice, tokenId, {}, NOW, meta())).toBeUndefined();
    expect(await updateToken(deps, alice, tokenId, { name: 'renamed', group: '' }, NOW, meta())).toBeTypeOf('bigint');
    await deleteToken(deps, alice, tokenId, meta());
    expect((await answer(deleteToken(deps, alice, tokenId, meta()))).status).toBe(404);
    const stream = await events.readStream(`token-${tokenId}`);
    expect(stream.map((e) => e.type)).toEqual(['TokenCreated', 'TokenUpdated', 'TokenDeleted']);
    expect(stream[1]!.data).toEqual({ changes: { name: 'renamed', group: 'default' } });
  });
});
