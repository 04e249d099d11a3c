/**
 * The channel key cipher (src/engine/channels/channel-key-cipher.ts): AES-256-GCM under CHANNEL_KEYS_SECRET,
 * previous secrets read by key id, clear text from older stores read as is, any change to a
 * stored key detected.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ChannelKeyDecryptError,
  channelKeyIdOf,
  createChannelKeyCipher,
  isEncryptedChannelKey,
  keyIdOfStoredKey,
} from '../../src/engine/channels/channel-key-cipher.js';
import { parseChannelKeysSecret } from '../../src/config/channel-keys-secret.js';

const secretA = randomBytes(32);
const secretB = randomBytes(32);
const CLEAR = 'sk-upstream-Ünïcode-🔑-0123456789';

/** Replaces one base64url character of the stored key's part `index` (0-based, split on `:`). */
function alterPart(stored: string, index: number): string {
  const parts = stored.split(':');
  const part = parts[index]!;
  parts[index] = (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
  return parts.join(':');
}

function decryptError(decrypt: () => string): ChannelKeyDecryptError {
  try {
    decrypt();
  } catch (err) {
    expect(err).toBeInstanceOf(ChannelKeyDecryptError);
    return err as ChannelKeyDecryptError;
  }
  throw new Error('decrypted');
}

describe('the channel key cipher', () => {
  it('round trip: the stored form is enc:v1:<key id>:<iv>:<ciphertext+tag>, holds nothing of the key, and decrypts to it', () => {
    const cipher = createChannelKeyCipher(secretA);
    const stored = cipher.encrypt(CLEAR);
    expect(stored).toMatch(/^enc:v1:[\w-]{8}:[\w-]{16}:[\w-]+$/);
    expect(keyIdOfStoredKey(stored)).toBe(channelKeyIdOf(secretA));
    expect(cipher.currentKeyId).toBe(channelKeyIdOf(secretA));
    expect(stored).not.toContain('sk-upstream');
    expect(cipher.decrypt(stored)).toBe(CLEAR);
    // A fresh IV each time: the same key never gives the same ciphertext.
    expect(cipher.encrypt(CLEAR)).not.toBe(stored);
    expect(cipher.isCurrent(stored)).toBe(true);
  });

  it('the empty key (no key) stays empty; a key without the enc: prefix is clear text from an older store', () => {
    const cipher = createChannelKeyCipher(secretA);
    expect(cipher.encrypt('')).toBe('');
    expect(cipher.decrypt('')).toBe('');
    expect(cipher.isCurrent('')).toBe(true);
    expect(cipher.decrypt('sk-legacy-clear')).toBe('sk-legacy-clear');
    expect(cipher.isCurrent('sk-legacy-clear')).toBe(false);
    expect(isEncryptedChannelKey('sk-legacy-clear')).toBe(false);
    expect(keyIdOfStoredKey('sk-legacy-clear')).toBeUndefined();
  });

  it('another secret cannot decrypt it, and says which key id it lacks', () => {
    const stored = createChannelKeyCipher(secretA).encrypt(CLEAR);
    const err = decryptError(() => createChannelKeyCipher(secretB).decrypt(stored));
    expect(err.keyId).toBe(channelKeyIdOf(secretA));
    expect(err.message).toBe(
      `channel key is encrypted under key id ${channelKeyIdOf(secretA)}, which is neither CHANNEL_KEYS_SECRET (key id ${channelKeyIdOf(secretB)}) nor in CHANNEL_KEYS_SECRET_PREVIOUS`,
    );
    expect(err.message).not.toContain(CLEAR);
  });

  it('a previous secret decrypts what it wrote; new keys are written under the current one only', () => {
    const old = createChannelKeyCipher(secretA).encrypt(CLEAR);
    const rotating = createChannelKeyCipher(secretB, [secretA]);
    expect(rotating.decrypt(old)).toBe(CLEAR);
    expect(rotating.isCurrent(old)).toBe(false);
    const fresh = rotating.encrypt(CLEAR);
    expect(keyIdOfStoredKey(fresh)).toBe(channelKeyIdOf(secretB));
    expect(rotating.isCurrent(fresh)).toBe(true);
    // The old secret alone cannot read what the new one wrote.
    expect(() => createChannelKeyCipher(secretA).decrypt(fresh)).toThrow(ChannelKeyDecryptError);
  });

  it('tampering is detected: altered ciphertext, altered IV, a moved key id, a cut-short or malformed key', () => {
    const cipher = createChannelKeyCipher(secretA, [secretB]);
    const stored = cipher.encrypt(CLEAR);
    expect(decryptError(() => cipher.decrypt(alterPart(stored, 4))).message).toMatch(/fails authentication: it was altered$/);
    expect(decryptError(() => cipher.decrypt(alterPart(stored, 3))).message).toMatch(/fails authentication|malformed/);
    // The header is authenticated: the same bytes under the other known key id fail too.
    const moved = stored.replace(`:${channelKeyIdOf(secretA)}:`, `:${channelKeyIdOf(secretB)}:`);
    expect(decryptError(() => cipher.decrypt(moved)).message).toMatch(/fails authentication/);
    const parts = stored.split(':');
    expect(decryptError(() => cipher.decrypt(parts.slice(0, 4).join(':'))).message).toMatch(/not in the enc:v1/);
    expect(decryptError(() => cipher.decrypt([...parts.slice(0, 4), 'AAAA'].join(':'))).message).toMatch(/cut short or malformed/);
    expect(decryptError(() => cipher.decrypt(stored.replace('enc:v1:', 'enc:v9:'))).message).toMatch(/not in the enc:v1/);
  });
});

describe('CHANNEL_KEYS_SECRET formats', () => {
  const bytes = randomBytes(32);
  it('takes 32 bytes as 64 hex characters, base64 (with or without =) and base64url', () => {
    for (const text of [
      bytes.toString('hex'),
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=$/, ''),
      bytes.toString('base64url'),
      ` ${bytes.toString('hex')}\n`,
    ])
      expect(parseChannelKeysSecret(text)?.equals(bytes), text).toBe(true);
  });

  it('refuses passphrases, other lengths and other alphabets', () => {
    for (const text of [
      '',
      'correct horse battery staple',
      'local-only-asset-signing-secret',
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('hex'),
      `${bytes.toString('hex').slice(0, 63)}g`,
    ])
      expect(parseChannelKeysSecret(text), text).toBeUndefined();
  });
});
