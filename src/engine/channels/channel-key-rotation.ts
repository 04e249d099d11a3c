/**
 * Re-encrypts every channel key that is not under the current secret (a previous secret's
 * ciphertext, or clear text from before encryption): one `ChannelUpdated` per such channel,
 * appended on the revision its key was read at, so a key an administrator changes meanwhile is
 * never overwritten. Events are immutable: the old ciphertexts stay in the log, readable only
 * while their secret exists (docs/decisions/0108-rotating-channel-keys.md).
 */
import { channelDecider } from '../../domain/channel.js';
import { streams } from '../../domain/events.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { appendEvents } from '../commands/append.js';
import { ChannelKeyDecryptError, keyIdOfStoredKey, type ChannelKeyCipher } from './channel-key-cipher.js';
import { readState } from '../commands/command-handler.js';
import { conflictRetry, FEW_WRITERS } from '../commands/conflict-retry.js';

export type ChannelKeyRotation =
  | { channelId: string; outcome: 'rotated'; from: string }
  | { channelId: string; outcome: 'current' | 'deleted' }
  | { channelId: string; outcome: 'unreadable'; reason: string };

const CHANNEL_PREFIX = streams.channel('');
const PAGE = 1000;

/** Every channel ever created, from the event log itself (a view may lag or be rebuilt). */
async function channelIds(events: EventStore): Promise<string[]> {
  const ids = new Set<string>();
  let after: bigint | undefined;
  for (;;) {
    const page = await events.readAll({ streamPrefixes: [CHANNEL_PREFIX], maxCount: PAGE, ...(after !== undefined ? { after } : {}) });
    for (const e of page) if (e.type === 'ChannelCreated') ids.add(e.streamName.slice(CHANNEL_PREFIX.length));
    if (page.length < PAGE) return [...ids];
    after = page[page.length - 1]!.position;
  }
}

async function rotateOne(events: EventStore, cipher: ChannelKeyCipher, channelId: string, metadata: EventMetadata): Promise<ChannelKeyRotation> {
  const stream = streams.channel(channelId);
  const conflicts = conflictRetry(FEW_WRITERS);
  for (;;) {
    const { state, revision } = await readState(events, stream, channelDecider);
    // A deleted channel is never used again; its key stays in the log under the old secret.
    if (state.status !== 'active') return { channelId, outcome: 'deleted' };
    const stored = state.settings.key;
    if (cipher.isCurrent(stored)) return { channelId, outcome: 'current' };
    let clear: string;
    try {
      clear = cipher.decrypt(stored);
    } catch (err) {
      if (err instanceof ChannelKeyDecryptError) return { channelId, outcome: 'unreadable', reason: err.message };
      throw err;
    }
    try {
      await appendEvents(events, stream, [{ type: 'ChannelUpdated', data: { changes: { key: cipher.encrypt(clear) } } }], {
        expectedRevision: revision,
        metadata,
      });
      return { channelId, outcome: 'rotated', from: keyIdOfStoredKey(stored) ?? 'clear text' };
    } catch (err) {
      // Changed meanwhile: read it again (the new key may already be current).
      if (!(await conflicts.again(err))) throw err;
    }
  }
}

export async function rotateChannelKeys(events: EventStore, cipher: ChannelKeyCipher, metadata: EventMetadata): Promise<ChannelKeyRotation[]> {
  const results: ChannelKeyRotation[] = [];
  for (const channelId of await channelIds(events)) results.push(await rotateOne(events, cipher, channelId, metadata));
  return results;
}
