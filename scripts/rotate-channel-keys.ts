/**
 * `npm run channels:rotate-keys`: re-encrypts every channel key under CHANNEL_KEYS_SECRET, reading
 * the old ones with CHANNEL_KEYS_SECRET_PREVIOUS (and clear-text keys of an older store as they
 * are). Safe to run while gateways run (each change is appended on the revision it read) and to
 * run again (a key already current is left alone). Exit 1 when a key could not be read: its
 * secret is missing from CHANNEL_KEYS_SECRET_PREVIOUS. Steps: README (Operations).
 */
import { loadConfig } from '../src/config.js';
import { rotateChannelKeys } from '../src/engine/channels/channel-key-rotation.js';
import { channelKeysNotice, loadChannelKeys } from '../src/engine/channels/channel-key-secret.js';
import { openStores } from './stores.js';

const keys = (() => {
  try {
    return loadChannelKeys(loadConfig());
  } catch (err) {
    // A configuration mistake: one line naming the setting, no stack.
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
})();
const notice = channelKeysNotice(keys);
if (notice) process.stderr.write(`${notice.message}\n`);

const stores = await openStores();
const results = await rotateChannelKeys(stores.events, keys.cipher, { at: new Date().toISOString(), correlationId: 'rotate-channel-keys' }).finally(() =>
  stores.close(),
);

const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
for (const r of results) {
  if (r.outcome === 'rotated') process.stdout.write(`${r.channelId}: re-encrypted (was ${r.from === 'clear text' ? 'clear text' : `key id ${r.from}`})\n`);
  if (r.outcome === 'unreadable') process.stdout.write(`${r.channelId}: NOT re-encrypted: ${r.reason}\n`);
}
process.stdout.write(
  `channel keys under key id ${keys.cipher.currentKeyId}: ${count('rotated')} re-encrypted, ${count('current')} already current, ` +
    `${count('deleted')} deleted (left as they are), ${count('unreadable')} unreadable\n`,
);
if (count('unreadable') > 0) {
  process.stdout.write(
    'add the missing secret to CHANNEL_KEYS_SECRET_PREVIOUS and run again, or give those channels a new key (PUT /api/channel/); keep every old secret until this reports 0 unreadable\n',
  );
  process.exitCode = 1;
}
