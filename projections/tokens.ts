import type { TokenSettings } from '../src/domain/events.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface TokenDoc extends TokenSettings {
  tokenId: string;
  accountId: string;
  userId: string;
  keyHash: string;
  keyTail: string;
  createdAt: string;
  /** Quota charged to tasks submitted with this token. */
  usedQuota: number;
  /**
   * What the token may have charged in all: `usedQuota` when `remainQuota` was last set, plus
   * that value. Unlike `remainQuota` it does not move as charges settle, so it can travel with a
   * reservation to the account aggregate, which enforces it (src/domain/account.ts). Absent on
   * documents projected before it existed: `tokenQuotaLimit` derives it.
   */
  quotaLimit?: number;
}

/** The token's cap; `remainQuota = max(0, cap − usedQuota)`. */
export function tokenQuotaLimit(doc: Pick<TokenDoc, 'usedQuota' | 'remainQuota' | 'quotaLimit'>): number {
  return doc.quotaLimit ?? doc.usedQuota + doc.remainQuota;
}

/**
 * Tokens with their usage. `remainQuota` falls as settlements are charged to the token;
 * a PUT that sets it starts the count again (the convention of the gateways of this field):
 * the cap becomes what was used so far plus the new value.
 */
export const tokensProjection: Projection<TokenDoc> = {
  name: 'tokens',
  view: VIEWS.tokens,
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
        return { ...e.data, createdAt: e.metadata.at, usedQuota: 0, quotaLimit: e.data.remainQuota };
      }
      case 'TokenUpdated': {
        if (!doc) return undefined;
        const { remainQuota } = e.data.changes;
        return { ...doc, ...e.data.changes, quotaLimit: remainQuota === undefined ? tokenQuotaLimit(doc) : doc.usedQuota + remainQuota };
      }
      case 'TokenDeleted':
        return doc ? null : undefined;
      case 'QuotaSettled': {
        if (!doc || e.data.charged === 0) return undefined;
        const quotaLimit = tokenQuotaLimit(doc);
        const usedQuota = doc.usedQuota + e.data.charged;
        return { ...doc, usedQuota, quotaLimit, remainQuota: Math.max(0, quotaLimit - usedQuota) };
      }
      default:
        return undefined;
    }
  },
};
