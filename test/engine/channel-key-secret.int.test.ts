/**
 * Where the channel keys secret comes from (src/config.ts, src/engine/channels/channel-key-secret.ts) and
 * the rotation (src/engine/channels/channel-key-rotation.ts) on a real event store: configuration refuses
 * a malformed secret and an EventStoreDB log without one, the embedded default generates one
 * once into DATA_DIR (0600), and the rotation re-encrypts every key not under the current secret.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { streams } from '../../src/domain/events.js';
import { appendEvents } from '../../src/engine/commands/append.js';
import { channelKeyIdOf, createChannelKeyCipher, keyIdOfStoredKey } from '../../src/engine/channels/channel-key-cipher.js';
import { rotateChannelKeys } from '../../src/engine/channels/channel-key-rotation.js';
import { channelKeysNotice, GENERATED_SECRET_FILE, loadChannelKeys } from '../../src/engine/channels/channel-key-secret.js';
import { createChannel, deleteChannel, updateChannel } from '../../src/engine/commands/channel-commands.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { useTempEventStore } from '../support/temp-event-store.js';
import { tempDir } from '../support/tmp.js';

const hexSecret = () => randomBytes(32).toString('hex');

describe('CHANNEL_KEYS_SECRET in the configuration', () => {
  it('refuses a secret that is not 32 bytes in hex or base64, naming the setting and what it must be', () => {
    expect(() => loadConfig({ CHANNEL_KEYS_SECRET: 'my passphrase is long enough' })).toThrow(
      /^invalid configuration: CHANNEL_KEYS_SECRET: must be 32 random bytes as 64 hex characters or as base64 \(generate one with `openssl rand -base64 32`\)$/,
    );
    expect(() => loadConfig({ CHANNEL_KEYS_SECRET: hexSecret(), CHANNEL_KEYS_SECRET_PREVIOUS: `${hexSecret()},short` })).toThrow(
      /^invalid configuration: CHANNEL_KEYS_SECRET_PREVIOUS: entry 2 is not 32 random bytes/,
    );
    const [current, old1, old2] = [hexSecret(), hexSecret(), randomBytes(32).toString('base64')];
    expect(loadConfig({ CHANNEL_KEYS_SECRET: current, CHANNEL_KEYS_SECRET_PREVIOUS: ` ${old1}, ${old2} ,` })).toMatchObject({
      channelKeysSecret: current,
      channelKeysSecretPrevious: [old1, old2],
    });
  });

  it('is required when the event log is EventStoreDB (the instances share it; a generated one would not be shared)', () => {
    const env = { EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false' };
    expect(() => loadConfig(env)).toThrow(/^invalid configuration: CHANNEL_KEYS_SECRET: required when EVENTSTORE_URL is set/);
    expect(loadConfig({ ...env, CHANNEL_KEYS_SECRET: hexSecret() }).eventStoreUrl).toBe(env.EVENTSTORE_URL);
    // On the embedded event log the roles share DATA_DIR, and so the generated secret.
    for (const ROLE of ['all', 'api']) expect(loadConfig({ ROLE }).channelKeysSecret).toBeUndefined();
  });
});

describe('the secret a gateway uses', () => {
  const dirs: { remove(): void }[] = [];
  const dataDir = () => {
    const d = tempDir();
    dirs.push(d);
    return d.path;
  };
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

  it('without CHANNEL_KEYS_SECRET: generated once into DATA_DIR (mode 0600), then reused', () => {
    const dir = dataDir();
    const first = loadChannelKeys({ dataDir: dir, channelKeysSecret: undefined, channelKeysSecretPrevious: [] });
    const file = join(dir, GENERATED_SECRET_FILE);
    expect(first).toMatchObject({ source: 'generated', file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(channelKeysNotice(first)).toEqual({ level: 'warn', message: expect.stringContaining(`generated into ${file}`) });
    const second = loadChannelKeys({ dataDir: dir, channelKeysSecret: undefined, channelKeysSecretPrevious: [] });
    expect(second).toMatchObject({ source: 'file', file });
    expect(second.cipher.currentKeyId).toBe(first.cipher.currentKeyId);
    expect(second.cipher.decrypt(first.cipher.encrypt('sk-1'))).toBe('sk-1');
  });

  it('a configured secret is used, and a generated one left in DATA_DIR is still read until rotated', () => {
    const dir = dataDir();
    const generated = loadChannelKeys({ dataDir: dir, channelKeysSecret: undefined, channelKeysSecretPrevious: [] });
    const written = generated.cipher.encrypt('sk-under-the-generated-secret');
    const secret = hexSecret();
    const configured = loadChannelKeys({ dataDir: dir, channelKeysSecret: secret, channelKeysSecretPrevious: [] });
    expect(configured.source).toBe('configured');
    expect(configured.cipher.currentKeyId).toBe(channelKeyIdOf(Buffer.from(secret, 'hex')));
    expect(configured.cipher.decrypt(written)).toBe('sk-under-the-generated-secret');
    expect(configured.cipher.isCurrent(written)).toBe(false);
    expect(channelKeysNotice(configured)?.message).toMatch(/still read as a previous secret; run npm run channels:rotate-keys, then delete it$/);
    // Without the file, nothing but the configured secret: no line.
    expect(channelKeysNotice(loadChannelKeys({ dataDir: dataDir(), channelKeysSecret: secret, channelKeysSecretPrevious: [] }))).toBeUndefined();
  });

  it('a damaged generated file stops the start, naming the file', () => {
    const dir = dataDir();
    writeFileSync(join(dir, GENERATED_SECRET_FILE), 'not a secret\n');
    expect(() => loadChannelKeys({ dataDir: dir, channelKeysSecret: undefined, channelKeysSecretPrevious: [] })).toThrow(
      `invalid configuration: ${join(dir, GENERATED_SECRET_FILE)}: not a channel keys secret`,
    );
    expect(readFileSync(join(dir, GENERATED_SECRET_FILE), 'utf8')).toBe('not a secret\n');
  });
});

describe('rotating the channel keys', () => {
  let events: EventStore;
  useTempEventStore((s) => (events = s));
  const meta = () => ({ at: new Date().toISOString(), correlationId: 'test' });
  const settings = (name: string, key: string) => ({ name, family: 'images', baseUrl: 'http://upstream.invalid', key, models: ['m'] });
  const keyOf = async (channelId: string) => {
    const stream = await events.readStream(streams.channel(channelId));
    let key = '';
    for (const e of stream) {
      if (e.type === 'ChannelCreated') key = (e.data as { key: string }).key;
      if (e.type === 'ChannelUpdated') key = (e.data as { changes: { key?: string } }).changes.key ?? key;
    }
    return key;
  };

  it('re-encrypts keys under a previous secret and clear ones under the current secret; leaves current, empty and deleted ones', async () => {
    const [oldSecret, newSecret] = [randomBytes(32), randomBytes(32)];
    const oldCipher = createChannelKeyCipher(oldSecret);
    const cipher = createChannelKeyCipher(newSecret, [oldSecret]);
    const underOld = (await createChannel(events, settings('old', oldCipher.encrypt('sk-old')), meta())).channelId;
    const clear = (await createChannel(events, settings('clear', 'sk-clear'), meta())).channelId;
    const current = (await createChannel(events, settings('current', cipher.encrypt('sk-current')), meta())).channelId;
    const empty = (await createChannel(events, settings('empty', ''), meta())).channelId;
    const deleted = (await createChannel(events, settings('deleted', oldCipher.encrypt('sk-deleted')), meta())).channelId;
    await deleteChannel(events, deleted, meta());
    // A key changed after creation: the change is what counts.
    const updated = (await createChannel(events, settings('updated', cipher.encrypt('sk-first')), meta())).channelId;
    await updateChannel(events, updated, { key: oldCipher.encrypt('sk-updated') }, meta());
    // Seeded channels are appended directly, not through the command.
    await appendEvents(
      events,
      streams.channel('seeded'),
      [
        {
          type: 'ChannelCreated',
          data: { ...settings('seeded', 'sk-seeded'), channelId: 'seeded', modelMapping: {}, groups: [], priority: 0, weight: 1, status: 1 },
        },
      ],
      {
        expectedRevision: 'no_stream',
        metadata: meta(),
      },
    );
    const currentBefore = await keyOf(current);

    const results = await rotateChannelKeys(events, cipher, meta());
    expect(results).toEqual(
      expect.arrayContaining([
        { channelId: underOld, outcome: 'rotated', from: channelKeyIdOf(oldSecret) },
        { channelId: clear, outcome: 'rotated', from: 'clear text' },
        { channelId: current, outcome: 'current' },
        { channelId: empty, outcome: 'current' },
        { channelId: deleted, outcome: 'deleted' },
        { channelId: updated, outcome: 'rotated', from: channelKeyIdOf(oldSecret) },
        { channelId: 'seeded', outcome: 'rotated', from: 'clear text' },
      ]),
    );
    expect(results).toHaveLength(7);
    const onlyNew = createChannelKeyCipher(newSecret);
    for (const [id, clearKey] of [
      [underOld, 'sk-old'],
      [clear, 'sk-clear'],
      [current, 'sk-current'],
      [updated, 'sk-updated'],
      ['seeded', 'sk-seeded'],
    ] as const) {
      const stored = await keyOf(id);
      expect(keyIdOfStoredKey(stored), id).toBe(cipher.currentKeyId);
      expect(onlyNew.decrypt(stored), id).toBe(clearKey);
    }
    expect(await keyOf(current)).toBe(currentBefore);
    expect(await keyOf(empty)).toBe('');

    // Run again: nothing left to do, nothing appended.
    const head = await events.headPosition();
    expect((await rotateChannelKeys(events, cipher, meta())).filter((r) => r.outcome === 'rotated')).toEqual([]);
    expect(await events.headPosition()).toBe(head);
  });

  it('a key whose secret is missing is reported unreadable and left as it is', async () => {
    const lost = createChannelKeyCipher(randomBytes(32));
    const id = (await createChannel(events, settings('lost', lost.encrypt('sk-lost')), meta())).channelId;
    const before = await keyOf(id);
    const [result] = await rotateChannelKeys(events, createChannelKeyCipher(randomBytes(32)), meta());
    expect(result).toEqual({ channelId: id, outcome: 'unreadable', reason: expect.stringContaining(`key id ${lost.currentKeyId}, which is neither`) });
    expect(await keyOf(id)).toBe(before);
  });
});
