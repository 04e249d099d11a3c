import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/engine/accounts/account-service.js';
import { createChannel, deleteChannel, updateChannel } from '../../src/engine/commands/channel-commands.js';
import { changePrices } from '../../src/engine/commands/price-commands.js';
import { endSession, startSession } from '../../src/engine/commands/session-commands.js';
import { registerUser } from '../../src/engine/accounts/users.js';
import { refused } from '../support/refused.js';
import { rotateWebhookSecret, webhookSecretFor } from '../../src/engine/commands/webhook-secrets.js';
import { normalizeError } from '../../src/http/errors.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { useTempEventStore } from '../support/temp-event-store.js';

const meta = () => ({ at: new Date().toISOString() });

let events: EventStore;
useTempEventStore((s) => (events = s));

const types = async (stream: string) => (await events.readStream(stream)).map((e) => e.type);

describe('channel commands', () => {
  it('create, update, delete; a missing or deleted channel answers 404 naming the id', async () => {
    const { channelId } = await createChannel(events, { name: 'n', family: 'image', baseUrl: '/_sim', models: ['m'] }, meta());
    await updateChannel(events, channelId, { weight: 3 }, meta());
    await deleteChannel(events, channelId, meta());
    expect(await types(`channel-${channelId}`)).toEqual(['ChannelCreated', 'ChannelUpdated', 'ChannelDeleted']);
    for (const [id, refused] of [
      [channelId, updateChannel(events, channelId, {}, meta())],
      [channelId, deleteChannel(events, channelId, meta())],
      ['ch_nope', updateChannel(events, 'ch_nope', {}, meta())],
    ] as const) {
      const err = normalizeError(await refused.catch((e: unknown) => e));
      expect([err.status, err.code, err.message, err.param]).toEqual([404, 'not_found', `id: no channel ${id}`, 'id']);
    }
    expect(await types(`channel-${channelId}`)).toHaveLength(3);
  });
});

describe('price commands', () => {
  it('changes apply to the table the stream holds, so concurrent changes of different models all take effect', async () => {
    await changePrices(events, { models: { a: { unit: 'request', price: 1 } }, groupRatios: { default: 1000 } }, meta());
    await Promise.all(
      ['b', 'c', 'd'].map((model, i) => changePrices(events, { models: { [model]: { unit: 'image', price: i + 2 } }, groupRatios: {} }, meta())),
    );
    await changePrices(events, { models: { a: null }, groupRatios: {} }, meta());
    const last = (await events.readStream('pricing')).at(-1)!;
    expect(last.data).toEqual({
      models: { b: { unit: 'image', price: 2 }, c: { unit: 'image', price: 3 }, d: { unit: 'image', price: 4 } },
      groupRatios: { default: 1000 },
    });
  });
});

describe('users and sessions', () => {
  it('registers a user (name, user stream, account) and refuses the name again in any case', async () => {
    const accounts = createAccountService({ events, log: pino({ level: 'silent' }) });
    const user = { username: 'Alice', passwordHash: 'h', role: 'user' as const, group: 'default' };
    const { userId, accountId } = await registerUser({ events, accounts }, user, meta());
    expect(await types('username-alice')).toEqual(['UsernameClaimed']);
    expect(await types(`user-${userId}`)).toEqual(['UserRegistered']);
    expect(await types(`account-${accountId}`)).toEqual(['AccountOpened']);
    await expect(registerUser({ events, accounts }, { ...user, username: 'ALICE' }, meta())).rejects.toEqual(refused('conflict', 'username_taken', 'username'));
  });

  it('two registrations racing for one name: exactly one wins', async () => {
    const accounts = createAccountService({ events, log: pino({ level: 'silent' }) });
    const user = { username: 'bob', passwordHash: 'h', role: 'user' as const, group: 'default' };
    const results = await Promise.allSettled([registerUser({ events, accounts }, user, meta()), registerUser({ events, accounts }, user, meta())]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')?.reason).toEqual(refused('conflict', 'username_taken', 'username'));
  });

  it('a session starts and ends once on the user stream; parallel logins all get in', async () => {
    const accounts = createAccountService({ events, log: pino({ level: 'silent' }) });
    const { userId } = await registerUser({ events, accounts }, { username: 'carol', passwordHash: 'h', role: 'user', group: 'default' }, meta());
    expect(await startSession(events, userId, { sessionHash: 's1', expiresAt: 1 }, meta())).toBeTypeOf('bigint');
    expect(await startSession(events, userId, { sessionHash: 's1', expiresAt: 1 }, meta())).toBeUndefined();
    expect(await endSession(events, userId, 's1', meta())).toBeTypeOf('bigint');
    expect(await endSession(events, userId, 's1', meta())).toBeUndefined();
    await Promise.all(['s2', 's3', 's4', 's5'].map((sessionHash) => startSession(events, userId, { sessionHash, expiresAt: 1 }, meta())));
    expect(await types(`user-${userId}`)).toEqual(['UserRegistered', 'UserSessionStarted', 'UserSessionEnded', ...Array<string>(4).fill('UserSessionStarted')]);
  });
});

describe('webhook secrets', () => {
  it('the first use creates one secret even when deliveries race; a rotation replaces it', async () => {
    const at = new Date();
    const secrets = await Promise.all([1, 2, 3].map(() => webhookSecretFor(events, 'acc1', at)));
    expect(new Set(secrets).size).toBe(1);
    expect(await types('webhooks-acc1')).toEqual(['WebhookSecretRotated']);
    const rotated = await rotateWebhookSecret(events, 'acc1', at);
    expect(rotated).not.toBe(secrets[0]);
    expect(rotated).toMatch(/^whsec_/);
    expect(await webhookSecretFor(events, 'acc1', at)).toBe(rotated);
  });
});
