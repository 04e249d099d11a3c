/**
 * Upstream channel keys at rest: AES-256-GCM under a secret from the environment, so the event
 * log and the views hold only ciphertext (docs/decisions/0106-channel-keys-encrypted-at-rest.md).
 *
 * Stored form: `enc:v1:<keyId>:<iv>:<ciphertext+tag>`, each part base64url. The key id (a hash
 * of the secret, not the secret) says which secret decrypts it, so a key written under a
 * previous secret is still read during a rotation. A stored key without the `enc:` prefix is
 * clear text (written before encryption existed); the empty key ("no key") stays empty.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { CHANNEL_KEYS_SECRET_BYTES as SECRET_BYTES } from '../../config/channel-keys-secret.js';

const PREFIX = 'enc:';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored channel key that cannot be read: its secret is not configured, or it was altered. */
export class ChannelKeyDecryptError extends Error {
  constructor(
    message: string,
    /** The key id the stored key names, when it names one. */
    readonly keyId: string | undefined,
  ) {
    super(message);
    this.name = 'ChannelKeyDecryptError';
  }
}

/** The short public name of a secret: the first 48 bits of a hash of it, base64url. */
export function channelKeyIdOf(secret: Buffer): string {
  return createHash('sha256').update('media-gateway channel keys: key id\0').update(secret).digest('base64url').slice(0, 8);
}

/** Whether a stored key is ciphertext (`enc:`); anything else is clear text from before encryption. */
export function isEncryptedChannelKey(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The key id a stored key was encrypted under; undefined for clear text. */
export function keyIdOfStoredKey(stored: string): string | undefined {
  return isEncryptedChannelKey(stored) ? stored.split(':')[2] : undefined;
}

export interface ChannelKeyCipher {
  /** Key id of CHANNEL_KEYS_SECRET: what new keys are encrypted under. */
  readonly currentKeyId: string;
  /** Ciphertext under the current secret (a fresh IV each time); the empty key stays empty. */
  encrypt(clear: string): string;
  /** The clear key: ciphertext under the current or a previous secret, or clear text as is. Throws ChannelKeyDecryptError. */
  decrypt(stored: string): string;
  /** Whether a stored key needs no rotation: the empty key, or ciphertext under the current secret. */
  isCurrent(stored: string): boolean;
}

/** What a reader of channels needs: the catalog decrypts, nothing else. */
export type ChannelKeyReader = Pick<ChannelKeyCipher, 'decrypt'>;

interface Secret {
  id: string;
  aesKey: Buffer;
}

function secretOf(secret: Buffer): Secret {
  if (secret.length !== SECRET_BYTES) throw new RangeError(`a channel keys secret is ${SECRET_BYTES} bytes, not ${secret.length}`);
  // The AES key is derived, so the key id (public) and the key (secret) are separate functions of it.
  const aesKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'media-gateway channel keys: aes-256-gcm v1', SECRET_BYTES));
  return { id: channelKeyIdOf(secret), aesKey };
}

/** The header is authenticated too (GCM additional data): a ciphertext moved under another key id fails. */
const headerOf = (keyId: string) => `${PREFIX}${VERSION}:${keyId}`;

function encryptUnder(secret: Secret, clear: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secret.aesKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(headerOf(secret.id)));
  const sealed = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${headerOf(secret.id)}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
}

function decryptUnder(secret: Secret, iv: Buffer, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', secret.aesKey, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(headerOf(secret.id)));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new ChannelKeyDecryptError(`channel key under key id ${secret.id} fails authentication: it was altered`, secret.id);
  }
}

/** `current`: CHANNEL_KEYS_SECRET's bytes; `previous`: older secrets, read but never written. */
export function createChannelKeyCipher(current: Buffer, previous: readonly Buffer[] = []): ChannelKeyCipher {
  const now = secretOf(current);
  const byId = new Map<string, Secret>([[now.id, now]]);
  for (const p of previous) {
    const s = secretOf(p);
    if (!byId.has(s.id)) byId.set(s.id, s);
  }

  function decrypt(stored: string): string {
    if (!isEncryptedChannelKey(stored)) return stored;
    const parts = stored.split(':');
    const [, version, keyId, ivText, sealedText] = parts;
    if (parts.length !== 5 || version !== VERSION || !keyId || !ivText || !sealedText)
      throw new ChannelKeyDecryptError(`channel key is not in the enc:${VERSION}:<key id>:<iv>:<ciphertext> form`, keyId);
    const secret = byId.get(keyId);
    if (!secret)
      throw new ChannelKeyDecryptError(
        `channel key is encrypted under key id ${keyId}, which is neither CHANNEL_KEYS_SECRET (key id ${now.id}) nor in CHANNEL_KEYS_SECRET_PREVIOUS`,
        keyId,
      );
    const iv = Buffer.from(ivText, 'base64url');
    const sealed = Buffer.from(sealedText, 'base64url');
    if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES)
      throw new ChannelKeyDecryptError(`channel key under key id ${keyId} is cut short or malformed`, keyId);
    return decryptUnder(secret, iv, sealed);
  }

  return {
    currentKeyId: now.id,
    encrypt: (clear) => (clear === '' ? '' : encryptUnder(now, clear)),
    decrypt,
    isCurrent: (stored) => stored === '' || keyIdOfStoredKey(stored) === now.id,
  };
}
