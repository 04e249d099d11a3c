import { createHash } from 'node:crypto';
import { randomBase62 } from '../../domain/ids.js';

/**
 * API keys and session ids carry 280+ bits of randomness, so a fast hash is enough: what is
 * stored can not be turned back into a usable secret.
 */
export const sha256 = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export const newApiKey = (): string => `sk-${randomBase62(48)}`;
export const newSessionId = (): string => randomBase62(48);

/** What a listing shows of a key: enough to tell keys apart, never enough to use one. */
export const maskKey = (tail: string): string => `sk-****${tail}`;
