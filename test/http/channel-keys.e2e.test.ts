/**
 * Channel keys encrypted at rest, on the assembled gateway (docs/decisions/0106-channel-keys-encrypted-at-rest.md): a key given to the admin API is appended and projected only as
 * ciphertext (nothing in DATA_DIR holds it in clear), a task on that channel reaches its upstream
 * with the clear key, also after a restart; a channel from an older store (clear key) is still
 * used. Without the secret a key was written under, its channel is not used (listed open with
 * the reason, the submit refused as for no channel, one error line, no 500). The rotation script
 * re-encrypts every key under the new secret (CHANNEL_KEYS_SECRET_PREVIOUS reading the old
 * ones), after which the new secret alone serves every channel; the log keeps the old
 * ciphertexts. `npm start` on EventStoreDB without CHANNEL_KEYS_SECRET refuses in one line.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams } from '../../src/domain/events.js';
import { appendEvents } from '../../src/engine/commands/append.js';
import { channelKeyIdOf, keyIdOfStoredKey } from '../../src/engine/channels/channel-key-cipher.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import type { ChannelDoc } from '../../projections/channels.js';
import { embeddedEnv, GATEWAY_SCRIPT } from '../support/child-gateway.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { startKeyRecordingUpstream, type KeyRecordingUpstream } from './key-recording-upstream.js';

/** Served by the channel created through the admin API. */
const MODEL = 'anime-diffusion-4-5-full';
/** Served by the channel an older version wrote, with its key in clear. */
const LEGACY_MODEL = 'anime-diffusion-4-5-curated';
const LEGACY_ID = 'legacy-clear';

const secretA = randomBytes(32);
const secretB = randomBytes(32);
const [A, B] = [secretA.toString('hex'), secretB.toString('base64')];
const [idA, idB] = [channelKeyIdOf(secretA), channelKeyIdOf(secretB)];
const KEY = `sk-admin-given-${randomBytes(8).toString('hex')}`;
const LEGACY_KEY = `sk-legacy-clear-${randomBytes(8).toString('hex')}`;

interface ChannelItem {
  id: string;
  key_set: boolean;
  key?: string;
  health: { state: string; last_error: string | null };
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The stored key of a channel as its stream leaves it, and every stored key it ever had. */
function storedKeys(stream: readonly RecordedEvent[]): string[] {
  return stream.flatMap((e) => {
    if (e.type === 'ChannelCreated') return [(e.data as { key: string }).key];
    const key = e.type === 'ChannelUpdated' ? (e.data as { changes: { key?: string } }).changes.key : undefined;
    return key === undefined ? [] : [key];
  });
}

function rotate(dataDir: string, env: Record<string, string>) {
  const { CHANNEL_KEYS_SECRET: _s, CHANNEL_KEYS_SECRET_PREVIOUS: _p, ...inherited } = embeddedEnv();
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/rotate-channel-keys.ts'], {
    cwd: process.cwd(),
    env: { ...inherited, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('channel keys at rest: encrypted, read, rotated', () => {
  const dir = tempDir('gateway-channel-keys-');
  let upstream: KeyRecordingUpstream;
  let channelId: string;
  let apiKey: string;
  let logLines: string[] = [];

  /** A gateway on the shared data directory, its log captured (no redaction: nothing may log a key). */
  async function start(env: Record<string, string>): Promise<{ gw: TestGateway; admin: Client; api: Client }> {
    logLines = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    const gw = await startGateway(
      { SIMULATOR: '0', ALLOW_LOOPBACK_OUTBOUND: '1', POLL_INTERVAL_MS: '50', CHANNEL_HEALTH_INTERVAL_MS: '0', RESPONSE_SCHEMAS: 'strict', ...env },
      { dataDir: dir.path, log: pino({ level: 'info' }, sink) },
    );
    const admin = await adminClient(gw);
    return { gw, admin, api: new Client(gw.url, apiKey) };
  }

  /** Submits an async image task and follows it to its end. */
  async function imageTask(api: Client, model: string): Promise<{ id: string; status: string }> {
    const submitted = await api.post<{ id: string }>('/v1/images/async/generations', { model, prompt: 'a key test', n: 1 });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    return eventually(async () => {
      const r = await api.get<{ id: string; status: string }>(`/v1/images/async/generations/${submitted.body.id}`);
      return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
    }, 15_000);
  }

  async function channels(admin: Client): Promise<ChannelItem[]> {
    const r = await admin.get<{ data: ChannelItem[] }>('/api/channel/');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  }

  beforeAll(async () => {
    upstream = await startKeyRecordingUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
    dir.remove();
  });

  it('the admin API encrypts the key before appending: events and view hold ciphertext only; the upstream gets the clear key', async () => {
    const { gw, admin } = await start({ CHANNEL_KEYS_SECRET: A });
    try {
      const prices = await admin.put('/api/pricing', { models: { [MODEL]: { unit: 'image', price: 1000 }, [LEGACY_MODEL]: { unit: 'image', price: 1000 } } });
      expect(prices.status, JSON.stringify(prices.body)).toBe(200);
      const created = await admin.post('/api/channel/', { name: 'encrypted', family: 'images', base_url: upstream.url, key: KEY, models: [MODEL] });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      channelId = created.body.data.id;
      // The answer keeps its shape: `key_set`, never the key.
      expect(created.body.data).toMatchObject({ id: channelId, key_set: true });
      expect(created.body.data.key).toBeUndefined();
      expect(JSON.stringify(created.body)).not.toContain(KEY);

      const [event] = (await gw.gateway.deps.events.readStream(streams.channel(channelId))).filter((e) => e.type === 'ChannelCreated');
      const storedKey = (event!.data as { key: string }).key;
      expect(storedKey).toMatch(new RegExp(`^enc:v1:${idA}:`));
      expect(JSON.stringify(await gw.gateway.deps.events.readAll(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(KEY);
      const view = await gw.gateway.deps.views.get<ChannelDoc>('channels', channelId);
      expect(view?.doc.key).toBe(storedKey);

      // A channel as an older version appended it: the key in clear.
      const legacy = await appendEvents(
        gw.gateway.deps.events,
        streams.channel(LEGACY_ID),
        [
          {
            type: 'ChannelCreated',
            data: {
              channelId: LEGACY_ID,
              name: 'legacy',
              family: 'images',
              baseUrl: upstream.url,
              key: LEGACY_KEY,
              models: [LEGACY_MODEL],
              modelMapping: {},
              groups: [],
              priority: 0,
              weight: 1,
              status: 1,
            },
          },
        ],
        { expectedRevision: 'no_stream', metadata: { at: new Date().toISOString(), correlationId: 'older-version' } },
      );
      await gw.gateway.deps.runner.waitFor(legacy.position);
      await gw.gateway.deps.catalog.refresh();

      const user = await newUser(admin, { credit: 10_000_000 });
      apiKey = (await newToken(user.client)).key;
      const api = new Client(gw.url, apiKey);
      expect((await imageTask(api, MODEL)).status).toBe('completed');
      expect((await imageTask(api, LEGACY_MODEL)).status).toBe('completed');
      expect(upstream.submittedKeys()).toEqual([KEY, LEGACY_KEY]);
      expect(Object.fromEntries((await channels(admin)).map((c) => [c.id, [c.key_set, c.health.state]]))).toEqual({
        [LEGACY_ID]: [true, 'closed'],
        [channelId]: [true, 'closed'],
      });
      expect(logLines.join('')).not.toContain(KEY);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('a restart on the same data and secret still sends the clear key', async () => {
    const { gw, api } = await start({ CHANNEL_KEYS_SECRET: A });
    try {
      expect((await imageTask(api, MODEL)).status).toBe('completed');
      expect(upstream.submittedKeys().at(-1)).toBe(KEY);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('without the secret a key was written under, its channel is not used: listed open with the reason, submits refused, no 500', async () => {
    const { gw, admin, api } = await start({ CHANNEL_KEYS_SECRET: B });
    const before = upstream.requests.length;
    try {
      const reason = `key: channel key is encrypted under key id ${idA}, which is neither CHANNEL_KEYS_SECRET (key id ${idB}) nor in CHANNEL_KEYS_SECRET_PREVIOUS`;
      const listed = await channels(admin);
      expect(listed.find((c) => c.id === channelId)).toMatchObject({ key_set: true, health: { state: 'open', last_error: reason } });
      expect(listed.find((c) => c.id === LEGACY_ID)?.health.state).toBe('closed');

      for (let i = 0; i < 2; i++) {
        const refused = await api.post('/v1/images/async/generations', { model: MODEL, prompt: 'no usable channel', n: 1 });
        expect(refused.status, JSON.stringify(refused.body)).toBe(403);
        expect(JSON.stringify(refused.body)).toContain('model_not_available');
      }
      // The channel whose key is clear text is not affected.
      expect((await imageTask(api, LEGACY_MODEL)).status).toBe('completed');
      expect(upstream.requests.slice(before).every((r) => r.endsWith(`Bearer ${LEGACY_KEY}`))).toBe(true);
      await gw.gateway.deps.catalog.refresh();
      // One error line, however often the catalog refreshes.
      const errors = logLines.filter((l) => l.includes(`channel ${channelId} is not used`));
      expect(errors).toHaveLength(1);
      expect(JSON.parse(errors[0]!)).toMatchObject({ level: 50, channelId, keyId: idA });
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('the rotation script re-encrypts every key under the new secret, reading the old ones with CHANNEL_KEYS_SECRET_PREVIOUS', async () => {
    // The old secret missing: what it can do is done, the rest is reported, exit 1.
    const partial = rotate(dir.path, { CHANNEL_KEYS_SECRET: B });
    expect(partial.status, partial.stderr).toBe(1);
    expect(partial.stdout).toContain(`${LEGACY_ID}: re-encrypted (was clear text)\n`);
    expect(partial.stdout).toContain(`${channelId}: NOT re-encrypted: channel key is encrypted under key id ${idA}`);
    expect(partial.stdout).toContain(`channel keys under key id ${idB}: 1 re-encrypted, 0 already current, 0 deleted (left as they are), 1 unreadable\n`);

    const done = rotate(dir.path, { CHANNEL_KEYS_SECRET: B, CHANNEL_KEYS_SECRET_PREVIOUS: A });
    expect(done.status, done.stderr + done.stdout).toBe(0);
    expect(done.stdout).toBe(
      `${channelId}: re-encrypted (was key id ${idA})\n` +
        `channel keys under key id ${idB}: 1 re-encrypted, 1 already current, 0 deleted (left as they are), 0 unreadable\n`,
    );
    expect(done.stderr).toMatch(/^events: SQLite .*events\.sqlite; views: SQLite .*views\.sqlite\n$/);
  }, 120_000);

  it('after the rotation the new secret alone serves every channel; the log still holds the old ciphertexts, nothing holds a key in clear', async () => {
    const { gw, admin, api } = await start({ CHANNEL_KEYS_SECRET: B });
    try {
      expect((await channels(admin)).map((c) => c.health.state)).toEqual(['closed', 'closed']);
      expect((await imageTask(api, MODEL)).status).toBe('completed');
      expect((await imageTask(api, LEGACY_MODEL)).status).toBe('completed');
      expect(upstream.submittedKeys().slice(-2)).toEqual([KEY, LEGACY_KEY]);
      expect(logLines.join('')).not.toMatch(/is not used/);

      // Events are immutable: the rotation appended, the old ciphertext (or clear text) stays.
      const keysOf = async (id: string) => storedKeys(await gw.gateway.deps.events.readStream(streams.channel(id))).map((k) => keyIdOfStoredKey(k) ?? k);
      expect(await keysOf(channelId)).toEqual([idA, idB]);
      expect(await keysOf(LEGACY_ID)).toEqual([LEGACY_KEY, idB]);
      expect(keyIdOfStoredKey((await gw.gateway.deps.views.get<ChannelDoc>('channels', channelId))!.doc.key)).toBe(idB);
    } finally {
      await gw.close();
    }
    // Every byte at rest: the event and view files (with their WALs), the assets, the bus.
    for (const file of filesUnder(dir.path)) expect(readFileSync(file).includes(KEY), file).toBe(false);
  }, 60_000);
});

describe('a gateway on EventStoreDB needs CHANNEL_KEYS_SECRET', () => {
  it('`npm start` with EVENTSTORE_URL and no CHANNEL_KEYS_SECRET exits 1 with one line naming the setting, and writes nothing', () => {
    const dir = tempDir();
    try {
      const { CHANNEL_KEYS_SECRET: _s, ...inherited } = embeddedEnv();
      const run = spawnSync(process.execPath, [GATEWAY_SCRIPT], {
        cwd: process.cwd(),
        env: { ...inherited, EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false', DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^invalid configuration: CHANNEL_KEYS_SECRET: required when EVENTSTORE_URL is set/),
      ]);
      expect(run.stdout).toBe('');
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      dir.remove();
    }
  }, 90_000);
});

describe('a damaged generated secret file', () => {
  it('`npm start` exits 1 with one line naming the file, no stack trace, and opens nothing else', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 'channel-keys.secret'), 'not a secret\n');
      const run = spawnSync(process.execPath, [GATEWAY_SCRIPT], {
        cwd: process.cwd(),
        env: { ...embeddedEnv(), DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^invalid configuration: .*channel-keys\.secret: not a channel keys secret$/)]);
      expect(readdirSync(dir.path)).toEqual(['channel-keys.secret']);
    } finally {
      dir.remove();
    }
  }, 90_000);
});
