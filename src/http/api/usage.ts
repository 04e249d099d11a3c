/**
 * Usage you can see: what settlements charged, summed by model or by API key, by the hour or by
 * the day, read from the usage view (projections/usage.ts; never from the events at request time).
 * - `GET /api/usage` (session): the caller's own account.
 * - `GET /api/admin/usage` (administrators): every account summed, or one user's (`user_id`).
 *
 * A range is the buckets that overlap `[from, to)`, UTC: `from` rounded down to its bucket, `to`
 * up. At most 31 days of hours (744 points) or 366 days of days, so an answer reads a bounded
 * number of hour documents: a day is the sum of its hours, made here.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenDoc } from '../../../projections/tokens.js';
import { NO_KEY, type UsageDoc } from '../../../projections/usage.js';
import type { UserDoc } from '../../../projections/users.js';
import { VIEWS } from '../../../projections/views.js';
import type { ViewFieldValue } from '../../ports/view-store.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError, invalidRequest } from '../errors.js';
import { API_ROUTE, envelope, ok } from '../api-response.js';
import { isoTime } from '../query-time.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The widest range of each bucket, in days: 744 hours, 366 days. */
const MAX_RANGE_DAYS = { hour: 31, day: 366 } as const;
/** The range when `from` is not given: the day (hours) or the 30 days (days) before `to`. */
const DEFAULT_SPAN = { hour: DAY, day: 30 * DAY } as const;
/** The earliest and latest times a Date holds (±100,000,000 days, whole days). */
const TIME_LIMIT = 8.64e15;

type Bucket = 'hour' | 'day';
type GroupBy = 'model' | 'key';

const UsageQuery = z.object({
  group_by: z.enum(['model', 'key']).default('model').meta({ description: 'one series per model, or per API key' }),
  bucket: z.enum(['hour', 'day']).default('day').meta({ description: 'points by the UTC hour, or by the UTC day' }),
  from: isoTime.optional().meta({ description: 'start of the range (rounded down to its bucket); default: a day (hours) or 30 days (days) before `to`' }),
  to: isoTime
    .optional()
    .meta({ description: 'end of the range, exclusive (rounded up to its bucket); default: now. At most 31 days of hours, 366 days of days' }),
});
const AdminUsageQuery = UsageQuery.extend({
  user_id: z.string().min(1).max(128).optional().meta({ description: "one user's usage; every account summed when absent" }),
});

const Point = z.object({ at: z.string().meta({ description: "the bucket's start (ISO 8601, UTC)" }), charged: z.number().int(), tasks: z.number().int() });
const Total = z.object({
  key: z.string().meta({ description: `the model, or the API key's id; "${NO_KEY}" for tasks without one` }),
  name: z.string().nullable().meta({ description: "the model, or the key's name as it is now (null when the key was deleted or for no key)" }),
  charged: z.number().int().meta({ description: 'quota units the settlements charged' }),
  tasks: z.number().int().meta({ description: 'settled tasks (completed and billed, free ones included; failed tasks are released, never counted)' }),
});
const Series = Total.pick({ key: true, name: true }).extend({
  points: z.array(Point).meta({ description: 'every bucket of the range, oldest first (0 where nothing was settled)' }),
});
const UsageFields = {
  bucket: z.enum(['hour', 'day']),
  group_by: z.enum(['model', 'key']),
  from: z.string().meta({ description: "the first bucket's start" }),
  to: z.string().meta({ description: "the last bucket's end (exclusive)" }),
  series: z.array(Series),
  totals: z.array(Total).meta({ description: 'each series summed over the range, largest charge first (the order of `series`)' }),
};
const Usage = z.object(UsageFields);
const AdminUsage = z.object({ ...UsageFields, user_id: z.string().nullable().meta({ description: 'whose usage; null: every account summed' }) });
type Usage = z.infer<typeof Usage>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The buckets `[start, end)` of a range, checked against its bound; a refusal names the field to change. */
function rangeOf(bucket: Bucket, from: string | undefined, to: string | undefined, now: number): { start: number; end: number } {
  const size = bucket === 'hour' ? HOUR : DAY;
  const toMs = to !== undefined ? Date.parse(to) : now;
  const fromMs = from !== undefined ? Date.parse(from) : Math.max(-TIME_LIMIT, toMs - DEFAULT_SPAN[bucket]);
  if (fromMs >= toMs) {
    throw to !== undefined ? invalidRequest('to', 'must be after from') : invalidRequest('from', 'must be before to (by default now)');
  }
  const start = Math.floor(fromMs / size) * size;
  const end = Math.ceil(toMs / size) * size;
  const days = MAX_RANGE_DAYS[bucket];
  if (end - start > days * DAY) {
    // No times in the words: `to` is often now, and a refusal reads the same whenever it is made.
    throw invalidRequest('from', `from and to span more than ${days} days in whole ${bucket}s, the most bucket=${bucket} covers; move them closer`);
  }
  return { start, end };
}

/**
 * The keys to read a range by: its UTC days when there are at most 31, else its months (a month
 * read whole, the hours outside the range dropped afterwards).
 */
function partsOf(start: number, end: number): Array<{ day: string } | { month: string }> {
  const firstDay = Math.floor(start / DAY) * DAY;
  if (end - firstDay <= 31 * DAY) {
    const days: Array<{ day: string }> = [];
    for (let t = firstDay; t < end; t += DAY) days.push({ day: iso(t).slice(0, 10) });
    return days;
  }
  const months: Array<{ month: string }> = [];
  const d = new Date(firstDay);
  for (let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1); t < end;) {
    months.push({ month: iso(t).slice(0, 7) });
    const m = new Date(t);
    t = Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1);
  }
  return months;
}

export function usageRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  /** The usage of the accounts `scope` selects (one account, or all), summed into series. */
  async function usageOf(
    scope: Readonly<Record<string, ViewFieldValue>>,
    query: { group_by: GroupBy; bucket: Bucket; from?: string | undefined; to?: string | undefined },
  ): Promise<Usage> {
    const { group_by, bucket } = query;
    const { start, end } = rangeOf(bucket, query.from, query.to, deps.clock().getTime());
    const size = bucket === 'hour' ? HOUR : DAY;
    const count = (end - start) / size;
    const series = new Map<string, { charged: number[]; tasks: number[] }>();
    for (const part of partsOf(start, end)) {
      for (const { doc } of await deps.views.find<UsageDoc>(VIEWS.usage, { ...scope, ...part })) {
        const at = Date.parse(`${doc.hour}:00:00Z`);
        if (!(at >= start && at < end)) continue;
        const i = Math.floor((at - start) / size);
        const key = group_by === 'model' ? doc.model : doc.tokenId;
        let s = series.get(key);
        if (!s) series.set(key, (s = { charged: new Array<number>(count).fill(0), tasks: new Array<number>(count).fill(0) }));
        s.charged[i]! += doc.charged;
        s.tasks[i]! += doc.tasks;
      }
    }
    const keys = [...series.keys()].filter((k) => k !== NO_KEY);
    const names =
      group_by === 'model'
        ? new Map(keys.map((k) => [k, k]))
        : new Map((await deps.views.getMany<TokenDoc>(VIEWS.tokens, keys)).map((d) => [d.id, d.doc.name]));
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const totals = [...series].map(([key, s]) => ({ key, name: names.get(key) ?? null, charged: sum(s.charged), tasks: sum(s.tasks) }));
    totals.sort((a, b) => b.charged - a.charged || b.tasks - a.tasks || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return {
      bucket,
      group_by,
      from: iso(start),
      to: iso(end),
      series: totals.map(({ key, name }) => {
        const s = series.get(key)!;
        return { key, name, points: s.charged.map((charged, i) => ({ at: iso(start + i * size), charged, tasks: s.tasks[i]! })) };
      }),
      totals,
    };
  }

  return async (app) => {
    app.get(
      '/api/usage',
      {
        config: API_ROUTE,
        schema: {
          tags: ['billing'],
          summary: "The signed-in user's usage by model or by API key, by the hour or the day",
          querystring: UsageQuery,
          response: { 200: envelope(Usage) },
        },
        preHandler: requireSession(deps),
      },
      async (request) => ok(await usageOf({ accountId: currentUser(request).accountId }, request.query)),
    );

    app.get(
      '/api/admin/usage',
      {
        config: { ...API_ROUTE, errorStatuses: [404] },
        schema: {
          tags: ['admin'],
          summary: "Everyone's usage, or one user's, by model or by API key, by the hour or the day",
          querystring: AdminUsageQuery,
          response: { 200: envelope(AdminUsage) },
        },
        preHandler: requireSession(deps, 'admin'),
      },
      async (request) => {
        const { user_id } = request.query;
        let scope = {};
        if (user_id !== undefined) {
          const user = await deps.views.get<UserDoc>(VIEWS.users, user_id);
          if (!user) throw new GatewayError(404, 'not_found', `user_id: no user ${user_id}`, 'user_id');
          scope = { accountId: user.doc.accountId };
        }
        return ok({ ...(await usageOf(scope, request.query)), user_id: user_id ?? null });
      },
    );
  };
}
