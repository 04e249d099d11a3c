/**
 * Balance adjustments by administrators: `POST /api/admin/credits` appends QuotaCredited to the
 * user's account, `POST /api/admin/debits` QuotaDebited (with its reason; never more than the
 * account has available, so nothing reserved is taken: 402 `insufficient_quota`).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { newId } from '../../domain/ids.js';
import type { AccountDoc } from '../../../projections/accounts.js';
import type { UserDoc } from '../../../projections/users.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, envelope, ok } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

const CreditBody = z
  .object({
    user_id: z.string().min(1),
    amount: z.number().int('must be an integer count of quota units').positive('must be positive').max(Number.MAX_SAFE_INTEGER),
    note: z.string().max(500).default(''),
    /** Makes a retried credit apply once. */
    credit_id: z.string().min(1).max(128).optional(),
  })
  .strict();

const DebitBody = z
  .object({
    user_id: z.string().min(1),
    amount: z.number().int('must be an integer count of quota units').positive('must be positive').max(Number.MAX_SAFE_INTEGER),
    reason: z.string().trim().min(1, 'must say why the balance is debited').max(500),
    /** Makes a retried debit apply once. */
    debit_id: z.string().min(1).max(128).optional(),
  })
  .strict();

const Adjusted = envelope(z.object({ account_id: z.string(), balance: z.number().int(), available: z.number().int() }));

export function creditRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  /** The account of `user_id`, or 404 naming it. */
  async function accountOfUser(userId: string): Promise<string> {
    const user = await deps.views.get<UserDoc>(VIEWS.users, userId);
    if (!user) throw new GatewayError(404, 'not_found', `user_id: no user ${userId}`, 'user_id');
    return user.doc.accountId;
  }

  /** The account's figures once the views show the adjustment. */
  async function adjusted(accountId: string, position: bigint | undefined) {
    if (position !== undefined) await deps.runner.waitFor(position);
    const account = await deps.views.get<AccountDoc>(VIEWS.accounts, accountId);
    return ok({ account_id: accountId, balance: account?.doc.balance ?? 0, available: account?.doc.available ?? 0 });
  }

  return async (app) => {
    app.post(
      '/api/admin/credits',
      { config: API_ROUTE, schema: { tags: ['admin'], body: CreditBody, response: { 200: Adjusted } }, preHandler: requireSession(deps, 'admin') },
      async (request) => {
        const { user_id, amount, note, credit_id } = request.body;
        const accountId = await accountOfUser(user_id);
        const admin = currentUser(request);
        const result = await deps.accounts.execute(
          accountId,
          { type: 'CreditQuota', data: { creditId: credit_id ?? newId('cr', 16), amount, note, by: admin.userId } },
          metadataFor(request, deps.clock(), { accountId }),
        );
        return adjusted(accountId, result.position);
      },
    );

    app.post(
      '/api/admin/debits',
      {
        config: { ...API_ROUTE, errorStatuses: [402] },
        schema: { tags: ['admin'], summary: 'Debit a user (never below what is reserved)', body: DebitBody, response: { 200: Adjusted } },
        preHandler: requireSession(deps, 'admin'),
      },
      async (request) => {
        const { user_id, amount, reason, debit_id } = request.body;
        const accountId = await accountOfUser(user_id);
        const result = await deps.accounts.execute(
          accountId,
          { type: 'DebitQuota', data: { debitId: debit_id ?? newId('db', 16), amount, reason, by: currentUser(request).userId } },
          metadataFor(request, deps.clock(), { accountId }),
        );
        return adjusted(accountId, result.position);
      },
    );
  };
}
