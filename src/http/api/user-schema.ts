/** The fields of a user, as the user routes read and answer them. */
import { z } from 'zod';
import type { AccountDoc } from '../../../projections/accounts.js';
import { userStatusOf, type UserDoc } from '../../../projections/users.js';

export const Username = z.string().regex(/^[A-Za-z0-9_.-]{3,32}$/, 'must be 3 to 32 letters, digits, `_`, `.` or `-`');
export const Password = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');
export const GroupName = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, `_` or `-`');

/** A user as administrators see them: who, and what their account holds. */
export const UserRow = z.object({
  id: z.string(),
  username: z.string(),
  role: z.enum(['admin', 'user']),
  group: z.string(),
  account_id: z.string(),
  status: z.enum(['enabled', 'disabled', 'deleted']),
  disabled_reason: z.string().nullable(),
  quota: z.number().int(),
  used_quota: z.number().int(),
  balance: z.number().int(),
  reserved_quota: z.number().int(),
  created_at: z.string(),
});
export type UserRow = z.infer<typeof UserRow>;

export function userRow(doc: UserDoc, account: AccountDoc | undefined): UserRow {
  return {
    id: doc.userId,
    username: doc.username,
    role: doc.role,
    group: doc.group,
    account_id: doc.accountId,
    status: userStatusOf(doc),
    disabled_reason: doc.disabledReason ?? null,
    quota: account?.available ?? 0,
    used_quota: account?.usedQuota ?? 0,
    balance: account?.balance ?? 0,
    reserved_quota: account?.reserved ?? 0,
    created_at: doc.createdAt,
  };
}
