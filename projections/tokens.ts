import type { TokenSettings } from '../src/domain/events.js';
import type { Projection } from './projection.js';

export interface TokenDoc extends TokenSettings {
  tokenId: string;
  accountId: string;
  userId: string;
  keyHash: string;
  keyTail: string;
  createdAt: string;
  /** Quota charged to tasks submitted with this token. */
  usedQuota: number;
}

/**
 * Tokens with their usage. `remainQuota` falls as settlements are charged to the token;
 * a PUT that sets it starts the count again (the convention of the gateways of this field).
 */
export const tokensProjection: Projection<TokenDoc> = {
  name: 'tokens',
  view: 'tokens',
  handles: ['TokenCreated', 'TokenUpdated', 'TokenDeleted', 'QuotaSettled'],
  documentId(e) {
    if (e.type === 'QuotaSettled') return e.data.tokenId;
    if (e.type === 'TokenCreated' || e.type === 'TokenUpdated' || e.type === 'TokenDeleted') return e.streamName.slice('token-'.length);
    return undefined;
  },
  evolve(doc, e) {
    switch (e.type) {
      case 'TokenCreated': {
        if (doc) return undefined;
        return { ...e.data, createdAt: e.metadata.at, usedQuota: 0 };
      }
      case 'TokenUpdated':
        return doc ? { ...doc, ...e.data.changes } : undefined;
      case 'TokenDeleted':
        return doc ? null : undefined;
      case 'QuotaSettled':
        if (!doc || e.data.charged === 0) return undefined;
        return { ...doc, usedQuota: doc.usedQuota + e.data.charged, remainQuota: Math.max(0, doc.remainQuota - e.data.charged) };
      default:
        return undefined;
    }
  },
};
