import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

/** Balance view of an account. Auditors compare it with a replay of the account stream. */
export interface AccountDoc {
  accountId: string;
  userId: string;
  group: string;
  balance: number;
  reserved: number;
  available: number;
  usedQuota: number;
  credited: number;
}

const withTotals = (doc: AccountDoc): AccountDoc => ({ ...doc, available: doc.balance - doc.reserved });

export const accountsProjection: Projection<AccountDoc> = {
  name: 'accounts',
  view: VIEWS.accounts,
  handles: ['AccountOpened', 'QuotaCredited', 'QuotaReserved', 'QuotaSettled', 'QuotaReleased', 'QuotaDebited'],
  documentId: (e) => e.streamName.slice('account-'.length),
  evolve(doc, e) {
    if (e.type === 'AccountOpened') {
      if (doc) return undefined;
      return { ...e.data, balance: 0, reserved: 0, available: 0, usedQuota: 0, credited: 0 };
    }
    if (!doc) return undefined;
    switch (e.type) {
      case 'QuotaCredited':
        return withTotals({ ...doc, balance: doc.balance + e.data.amount, credited: doc.credited + e.data.amount });
      case 'QuotaDebited':
        return withTotals({ ...doc, balance: doc.balance - e.data.amount, usedQuota: doc.usedQuota + e.data.amount });
      case 'QuotaReserved':
        return withTotals({ ...doc, reserved: doc.reserved + e.data.amount });
      // The account aggregate closes a reservation once, so each close is folded once.
      case 'QuotaSettled':
        return withTotals({
          ...doc,
          balance: doc.balance - e.data.charged,
          usedQuota: doc.usedQuota + e.data.charged,
          reserved: doc.reserved - e.data.reserved,
        });
      case 'QuotaReleased':
        return withTotals({ ...doc, reserved: doc.reserved - e.data.amount });
      default:
        return undefined;
    }
  },
};
