/**
 * How CHANNEL_KEYS_SECRET is written: read by the configuration (src/config.ts), which fails the
 * start on anything else, and by the channel key cipher (src/engine/channels/channel-key-cipher.ts).
 */

/** A channel keys secret is this many bytes: the AES-256 key is derived from them. */
export const CHANNEL_KEYS_SECRET_BYTES = 32;

/** What CHANNEL_KEYS_SECRET must be; said by the configuration error. */
export const CHANNEL_KEYS_SECRET_FORMAT = '32 random bytes as 64 hex characters or as base64 (generate one with `openssl rand -base64 32`)';

/**
 * The 32 bytes of a secret written as 64 hex characters or as base64 / base64url (43 characters,
 * or 44 with its `=`); undefined for anything else. No passphrases: a key derived from a
 * passphrase is only as strong as the passphrase, and this one guards every upstream credential.
 */
export function parseChannelKeysSecret(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) return undefined;
  const bytes = Buffer.from(t, 'base64');
  return bytes.length === CHANNEL_KEYS_SECRET_BYTES ? bytes : undefined;
}
