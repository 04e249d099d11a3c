/**
 * Who a request acts for, as the engine needs it: the API key's account, group, limits and the
 * quota it may still spend. Authentication (src/http/auth/bearer.ts) builds it; the engine only
 * reads it.
 */
import { tokenQuotaExhausted } from '../../domain/account.js';

export interface Caller {
  tokenId: string;
  accountId: string;
  userId: string;
  /** Billing and channel group the token acts in. */
  group: string;
  modelLimits: readonly string[];
  /** A token bound to a channel (the motion family's "channel API key"). */
  channelId: string | null;
  remainQuota: number;
  /** The token's cap as the account aggregate enforces it (projections/tokens.ts). */
  quotaLimit: number;
  unlimitedQuota: boolean;
}

export function assertTokenCovers(caller: Caller, amount: number): void {
  if (!caller.unlimitedQuota && amount > caller.remainQuota) throw tokenQuotaExhausted(caller.remainQuota, amount);
}
