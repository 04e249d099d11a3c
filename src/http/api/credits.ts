/** Admin credits: `POST /api/admin/credits` appends QuotaCredited to the user's account. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { newId } from '../../domain/ids.js';
import type { AccountDoc } from '../../../projections/accounts.js';
import type { UserDoc } from '../../../projections/users.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, ok } from '../api-response.js';
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

export function creditRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/api/admin/credits',
      { config: API_ROUTE, schema: { tags: ['admin'], body: CreditBody }, preHandler: requireSession(deps, 'admin') },
      async (request) => {
        const { user_id, amount, note, credit_id } = request.body;
        const user = await deps.views.get<UserDoc>(VIEWS.users, user_id);
        if (!user) throw new GatewayError(404, 'not_found', `user_id: no user ${user_id}`, 'user_id');
        const accountId = user.doc.accountId;
        const admin = currentUser(request);
        const result = await deps.accounts.execute(
          accountId,
          { type: 'CreditQuota', data: { creditId: credit_id ?? newId('cr', 16), amount, note, by: admin.userId } },
          metadataFor(request, deps.clock(), { accountId }),
        );
        if (result.position !== undefined) await deps.runner.waitFor(result.position);
        const account = await deps.views.get<AccountDoc>(VIEWS.accounts, accountId);
        return ok({ account_id: accountId, balance: account?.doc.balance ?? 0, available: account?.doc.available ?? 0 });
      },
    );
  };
}
