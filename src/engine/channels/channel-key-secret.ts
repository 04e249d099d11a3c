/**
 * Where the channel keys secret comes from: CHANNEL_KEYS_SECRET (with CHANNEL_KEYS_SECRET_PREVIOUS
 * during a rotation), or, on the embedded default without it, a secret generated once into
 * DATA_DIR. The configuration refuses an event log outside DATA_DIR without CHANNEL_KEYS_SECRET
 * (src/config.ts): a generated secret would then differ per instance and be lost with a container.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { createFileOnce } from '../../lib/file-once.js';
import { parseChannelKeysSecret } from '../../config/channel-keys-secret.js';
import { channelKeyIdOf, createChannelKeyCipher, type ChannelKeyCipher } from './channel-key-cipher.js';

export const GENERATED_SECRET_FILE = 'channel-keys.secret';

export interface LoadedChannelKeys {
  cipher: ChannelKeyCipher;
  /**
   * `configured`: CHANNEL_KEYS_SECRET. `generated`: made now into `file`. `file`: read from `file`,
   * made on an earlier start.
   */
  source: 'configured' | 'generated' | 'file';
  /** The generated secret's file, when one is in use (as the current secret, or as a previous one). */
  file?: string;
}

function parsed(text: string, where: string): Buffer {
  const secret = parseChannelKeysSecret(text);
  if (!secret) throw new Error(`invalid configuration: ${where}: not a channel keys secret`);
  return secret;
}

/** The generated secret, made when absent. Several processes on one DATA_DIR may race: one file wins, whole. */
function generatedSecret(path: string): { secret: Buffer; generated: boolean } {
  const generated = createFileOnce(path, `${randomBytes(32).toString('base64url')}\n`, 0o600);
  return { secret: parsed(readFileSync(path, 'utf8'), path), generated };
}

export function loadChannelKeys(config: Pick<Config, 'dataDir' | 'channelKeysSecret' | 'channelKeysSecretPrevious'>): LoadedChannelKeys {
  const path = join(config.dataDir, GENERATED_SECRET_FILE);
  const previous = config.channelKeysSecretPrevious.map((p, i) => parsed(p, `CHANNEL_KEYS_SECRET_PREVIOUS (entry ${i + 1})`));
  if (config.channelKeysSecret) {
    const current = parsed(config.channelKeysSecret, 'CHANNEL_KEYS_SECRET');
    // A secret generated before CHANNEL_KEYS_SECRET was set still reads what it wrote, until
    // the rotation re-encrypts those keys and the operator deletes the file.
    const fromFile = existsSync(path) ? parsed(readFileSync(path, 'utf8'), path) : undefined;
    const cipher = createChannelKeyCipher(current, fromFile ? [...previous, fromFile] : previous);
    return fromFile && channelKeyIdOf(fromFile) !== cipher.currentKeyId ? { cipher, source: 'configured', file: path } : { cipher, source: 'configured' };
  }
  const { secret, generated } = generatedSecret(path);
  return { cipher: createChannelKeyCipher(secret, previous), source: generated ? 'generated' : 'file', file: path };
}

/** The one line a gateway logs about its channel keys secret (undefined: nothing worth a line). */
export function channelKeysNotice(loaded: LoadedChannelKeys): { level: 'info' | 'warn'; message: string } | undefined {
  const id = loaded.cipher.currentKeyId;
  switch (loaded.source) {
    case 'generated':
      return {
        level: 'warn',
        message: `CHANNEL_KEYS_SECRET is not set: channel keys are encrypted at rest under a secret generated into ${loaded.file} (key id ${id}, mode 0600); back it up apart from the data, or set CHANNEL_KEYS_SECRET and run npm run channels:rotate-keys`,
      };
    case 'file':
      return { level: 'info', message: `CHANNEL_KEYS_SECRET is not set: channel keys are encrypted at rest under the secret in ${loaded.file} (key id ${id})` };
    case 'configured':
      return loaded.file
        ? {
            level: 'warn',
            message: `channel keys: ${loaded.file} (a generated secret) is still read as a previous secret; run npm run channels:rotate-keys, then delete it`,
          }
        : undefined;
  }
}
