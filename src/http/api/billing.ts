/**
 * `GET /api/billing/ledger`: the caller's account statement — every reservation, settlement,
 * release, credit and debit, newest first, with the task, model, price basis and amounts, so a
 * charge can be traced to the upstream result it was settled on. An administrator reads any
 * account's with `account_id`; anyone else naming an account not their own is refused (a
 * parameter that did nothing would answer the wrong statement without saying so).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LedgerEntry } from '../../../projections/ledger.js';
import { currentUser, requireSession } from '../auth/session.js';
import { GatewayError } from '../errors.js';
import type { GatewayDeps } from '../deps.js';
import { API_ROUTE, listPage, ok, pageQuery } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';
import { isoTime } from '../query-time.js';

const LedgerQuery = z.object({
  ...pageQuery(500, 50),
  from: isoTime.optional(),
  to: isoTime.optional(),
  model: z.string().min(1).max(128).optional(),
  task_id: z.string().min(1).max(128).optional(),
  account_id: z.string().min(1).max(128).optional().meta({ description: "whose statement: an administrator's to choose; others may name only their own" }),
});

const record = (e: LedgerEntry) => ({
  id: e.entryId,
  type: e.type,
  at: e.at,
  position: e.position,
  task_id: e.taskId,
  reservation_id: e.reservationId,
  model: e.model,
  amount: e.amount,
  balance_delta: e.balanceDelta,
  reserved_delta: e.reservedDelta,
  basis: e.basis,
  /** Units the upstream delivered when it sent more than was asked for (only those asked were charged). */
  delivered_units: e.deliveredUnits ?? null,
  note: e.note,
});

export function billingRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/billing/ledger',
      { config: API_ROUTE, schema: { tags: ['billing'], querystring: LedgerQuery }, preHandler: requireSession(deps) },
      async (request) => {
        const user = currentUser(request);
        const { p, size, from, to, model, task_id, account_id } = request.query;
        if (account_id !== undefined && account_id !== user.accountId && user.role !== 'admin') {
          throw new GatewayError(403, 'forbidden', "account_id: only an administrator may read another account's statement", 'account_id');
        }
        const where = { accountId: account_id ?? user.accountId, ...(model ? { model } : {}), ...(task_id ? { taskId: task_id } : {}) };
        if (!from && !to) return listPage(deps.views, VIEWS.ledger, where, { sortBy: 'seq', desc: true }, { p, size }, record);
        // A time window: walk the statement newest first and keep what falls inside.
        const wanted = (p + 1) * size;
        const inside: LedgerEntry[] = [];
        for (let offset = 0; inside.length < wanted; offset += 1000) {
          const chunk = await deps.views.find<LedgerEntry>(VIEWS.ledger, where, { sortBy: 'seq', desc: true, limit: 1000, offset });
          for (const { doc } of chunk) if ((!from || doc.at >= from) && (!to || doc.at <= to)) inside.push(doc);
          if (chunk.length < 1000 || (from && chunk.length && chunk[chunk.length - 1]!.doc.at < from)) break;
        }
        return ok({ items: inside.slice(p * size, wanted).map(record), page: p, page_size: size });
      },
    );
  };
}
