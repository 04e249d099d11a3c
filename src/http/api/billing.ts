/**
 * `GET /api/billing/ledger`: the caller's account statement — every reservation, settlement,
 * release, credit and debit, newest first, with the task, model, API key, price basis and
 * amounts, so a charge can be traced to the upstream result it was settled on and to the key
 * that asked for it. An administrator reads any account's with `account_id`; anyone else naming
 * an account not their own is refused (a parameter that did nothing would answer the wrong
 * statement without saying so). `format=csv` answers the whole statement (every page, at most
 * CSV_MAX_ROWS entries) as a CSV file.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PriceBasis } from '../../domain/events.js';
import type { LedgerEntry } from '../../../projections/ledger.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import { csvRecord, type CsvValue } from '../../lib/csv.js';
import type { ViewFieldValue } from '../../ports/view-store.js';
import { currentUser, requireSession } from '../auth/session.js';
import { GatewayError } from '../errors.js';
import type { GatewayDeps } from '../deps.js';
import { API_ROUTE, envelope, newestFirst, ok, pageQuery } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';
import { isoTime } from '../query-time.js';
import { sendCsv } from '../csv.js';

/** The most entries one CSV export holds; a longer statement is refused, to be narrowed with `from` and `to`. */
export const CSV_MAX_ROWS = 100_000;

const LedgerQuery = z.object({
  ...pageQuery(500, 50),
  from: isoTime.optional(),
  to: isoTime.optional(),
  model: z.string().min(1).max(128).optional(),
  task_id: z.string().min(1).max(128).optional(),
  account_id: z.string().min(1).max(128).optional().meta({ description: "whose statement: an administrator's to choose; others may name only their own" }),
  format: z
    .enum(['json', 'csv'])
    .default('json')
    .meta({ description: `json: one page; csv: the whole statement (every page, at most ${CSV_MAX_ROWS} entries) as a CSV file` }),
});

const nullableText = z.string().nullable();

export const LedgerRecord = z.object({
  id: z.string(),
  type: z.enum(['QuotaCredited', 'QuotaReserved', 'QuotaSettled', 'QuotaReleased', 'QuotaDebited']),
  at: z.string(),
  position: z.string(),
  task_id: nullableText,
  reservation_id: nullableText,
  model: nullableText.meta({ description: "the model; on a release, the released reservation's" }),
  token_id: nullableText.meta({
    description:
      'the API key the task was submitted with (reservations, settlements, releases); null for credits, debits and entries from before keys were recorded',
  }),
  token_name: nullableText.meta({ description: "that key's name as it is now; null when the key was deleted" }),
  amount: z.number().int(),
  balance_delta: z.number().int(),
  reserved_delta: z.number().int(),
  basis: PriceBasis.nullable(),
  /** Units the upstream delivered when it sent more than was asked for (only those asked were charged). */
  delivered_units: z.number().nullable(),
  note: nullableText,
});
type LedgerRecord = z.infer<typeof LedgerRecord>;

const LedgerPage = z.object({
  items: z.array(LedgerRecord),
  total: z.number().int().optional().meta({ description: 'how many entries match; left out when `from` or `to` is given' }),
  page: z.number().int(),
  page_size: z.number().int(),
});

/** The CSV's columns: the JSON record's fields, in its order (`basis` as JSON text). */
const CSV_COLUMNS = Object.keys(LedgerRecord.shape) as Array<keyof LedgerRecord>;

/** A record's field as a CSV field: the price basis as its JSON text. */
const csvValueOf = (r: LedgerRecord, column: keyof LedgerRecord): CsvValue => (column === 'basis' ? r.basis && JSON.stringify(r.basis) : r[column]);

export function billingRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  /**
   * Records for entries of one account: each key's name from the tokens view as it is now, and a
   * model of a release recorded before the event named it from its reservation's entry, found in
   * `models` (reservations already seen) or looked up.
   */
  async function recordsOf(entries: readonly LedgerEntry[], models: Map<string, string> = new Map()): Promise<LedgerRecord[]> {
    const tokenIds = [...new Set(entries.map((e) => e.tokenId).filter((id): id is string => typeof id === 'string'))];
    const names = new Map((await deps.views.getMany<TokenDoc>(VIEWS.tokens, tokenIds)).map((d) => [d.id, d.doc.name]));
    for (const e of entries) if (e.type === 'QuotaReserved' && e.reservationId && e.model) models.set(e.reservationId, e.model);
    for (const e of entries) {
      if (e.type !== 'QuotaReleased' || e.model || !e.reservationId || models.has(e.reservationId)) continue;
      const where = { accountId: e.accountId, reservationId: e.reservationId, type: 'QuotaReserved' };
      const [reserved] = await deps.views.find<LedgerEntry>(VIEWS.ledger, where, { limit: 1 });
      if (reserved?.doc.model) models.set(e.reservationId, reserved.doc.model);
    }
    return entries.map((e) => ({
      id: e.entryId,
      type: e.type,
      at: e.at,
      position: e.position,
      task_id: e.taskId,
      reservation_id: e.reservationId,
      model: e.model ?? (e.type === 'QuotaReleased' && e.reservationId ? (models.get(e.reservationId) ?? null) : null),
      token_id: e.tokenId ?? null,
      token_name: e.tokenId ? (names.get(e.tokenId) ?? null) : null,
      amount: e.amount,
      balance_delta: e.balanceDelta,
      reserved_delta: e.reservedDelta,
      basis: e.basis,
      delivered_units: e.deliveredUnits ?? null,
      note: e.note,
    }));
  }

  /**
   * The statement's entries newest first, a chunk at a time (newestFirst), inside `[from, to]` when given: the
   * view is walked by position and entries outside the window skipped (times follow positions,
   * so the walk stops once it is past `from`).
   */
  const entriesOf = (where: Readonly<Record<string, ViewFieldValue>>, from: string | undefined, to: string | undefined): AsyncGenerator<LedgerEntry[]> =>
    newestFirst<LedgerEntry>(
      deps.views,
      VIEWS.ledger,
      where,
      (doc) => (!from || doc.at >= from) && (!to || doc.at <= to),
      (oldest) => Boolean(from && oldest.at < from),
    );

  /** The whole statement as CSV text: a header row, then one row per entry; refused past CSV_MAX_ROWS. */
  async function csvOf(where: Readonly<Record<string, ViewFieldValue>>, from: string | undefined, to: string | undefined): Promise<string> {
    const tooMany = (count: string) =>
      new GatewayError(
        400,
        'invalid_request',
        `from: the statement has ${count} entries, more than the ${CSV_MAX_ROWS} one CSV export holds; narrow it with from and to`,
        'from',
      );
    if (!from && !to) {
      const total = await deps.views.count(VIEWS.ledger, where);
      if (total > CSV_MAX_ROWS) throw tooMany(String(total));
    }
    const parts = [csvRecord(CSV_COLUMNS)];
    const models = new Map<string, string>();
    let rows = 0;
    for await (const entries of entriesOf(where, from, to)) {
      rows += entries.length;
      if (rows > CSV_MAX_ROWS) throw tooMany('more than that');
      for (const r of await recordsOf(entries, models)) parts.push(csvRecord(CSV_COLUMNS.map((c) => csvValueOf(r, c))));
    }
    return parts.join('');
  }

  return async (app) => {
    app.get(
      '/api/billing/ledger',
      {
        config: { ...API_ROUTE, csv: 'when-asked' },
        schema: { tags: ['billing'], summary: "An account's statement, newest first", querystring: LedgerQuery, response: { 200: envelope(LedgerPage) } },
        preHandler: requireSession(deps),
      },
      async (request, reply) => {
        const user = currentUser(request);
        const { p, size, from, to, model, task_id, account_id, format } = request.query;
        if (account_id !== undefined && account_id !== user.accountId && user.role !== 'admin') {
          throw new GatewayError(403, 'forbidden', "account_id: only an administrator may read another account's statement", 'account_id');
        }
        const accountId = account_id ?? user.accountId;
        const where = { accountId, ...(model ? { model } : {}), ...(task_id ? { taskId: task_id } : {}) };
        if (format === 'csv') {
          const csv = await csvOf(where, from, to);
          // sendCsv keeps only a safe subset of an administrator's account_id, which is any text.
          return sendCsv(reply, `ledger-${accountId}.csv`, csv);
        }
        if (!from && !to) {
          const [docs, total] = await Promise.all([
            deps.views.find<LedgerEntry>(VIEWS.ledger, where, { sortBy: 'seq', desc: true, limit: size, offset: p * size }),
            deps.views.count(VIEWS.ledger, where),
          ]);
          return ok({ items: await recordsOf(docs.map((d) => d.doc)), total, page: p, page_size: size });
        }
        // A time window: walk the statement newest first and keep what falls inside.
        const wanted = (p + 1) * size;
        const inside: LedgerEntry[] = [];
        for await (const entries of entriesOf(where, from, to)) {
          inside.push(...entries);
          if (inside.length >= wanted) break;
        }
        return ok({ items: await recordsOf(inside.slice(p * size, wanted)), page: p, page_size: size });
      },
    );
  };
}
