/**
 * `GET /api/tasks` (session): the tasks of the caller's account, newest first, every family in
 * one shape — what the web console lists. A task's full answer stays its family's query route
 * (with an API key); this is the account-wide summary a session can read.
 *
 * `GET /api/admin/tasks` (administrators): the task log across users, filtered by user, key,
 * model, family, channel, status and time, as pages or as one CSV download.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountTaskDoc } from '../../../projections/account-tasks.js';
import { signAssetRefs } from '../../engine/media/sign-asset-refs.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { API_ROUTE, envelope, listPage, newestFirst, ok, pageOf, pageQuery } from '../api-response.js';
import { GatewayError } from '../errors.js';
import type { UserDoc } from '../../../projections/users.js';
import { isoTime } from '../query-time.js';
import { sendCsv } from '../csv.js';
import { csvRecord } from '../../lib/csv.js';
import { VIEWS } from '../../../projections/views.js';

const TaskStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);

const TasksQuery = z.object({
  ...pageQuery(),
  status: TaskStatus.optional(),
});

const isoOrNull = z.string().nullable();

export const TaskSummary = z.object({
  id: z.string(),
  account_id: z.string(),
  token_id: z.string().nullable(),
  channel_id: z.string().nullable(),
  family: z.string(),
  action: z.string(),
  model: z.string(),
  prompt: z.string().nullable(),
  status: TaskStatus,
  progress: z.number().int(),
  created_at: z.string(),
  completed_at: isoOrNull,
  reserved: z.number().int(),
  charged: z.number().int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  results: z.array(z.object({ kind: z.string(), url: z.string().nullable(), content_type: z.string().nullable(), text: z.string().nullable() })),
  assets_expire_at: isoOrNull,
  callback_url: z.string().nullable(),
  sync: z.boolean(),
});

const AdminTasksQuery = z.object({
  ...pageQuery(500, 50),
  status: TaskStatus.optional(),
  user_id: z.string().min(1).max(64).optional(),
  token_id: z.string().min(1).max(64).optional(),
  model: z.string().min(1).max(128).optional(),
  family: z.string().min(1).max(64).optional(),
  channel_id: z.string().min(1).max(64).optional(),
  from: isoTime.optional().meta({ description: 'tasks created at or after' }),
  to: isoTime.optional().meta({ description: 'tasks created at or before' }),
  format: z.enum(['json', 'csv']).default('json').meta({ description: 'csv: every matching task (at most 100,000) as one download' }),
});

/** The most rows one CSV export holds. */
const CSV_ROWS = 100_000;

const CSV_HEADER = [
  'id',
  'created_at',
  'completed_at',
  'status',
  'account_id',
  'token_id',
  'family',
  'action',
  'model',
  'channel_id',
  'reserved',
  'charged',
  'error_code',
  'prompt',
];

const TaskPage = pageOf(TaskSummary);

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/**
 * The answer for one task. Only the result URLs are signed (on this instance's base, and only for
 * the task's own files): a prompt or a result text is the client's or the upstream's words and
 * stays as written.
 */
function summaryOf(doc: AccountTaskDoc, sign: (ref: string) => string): z.infer<typeof TaskSummary> {
  return {
    id: doc.taskId,
    account_id: doc.accountId,
    token_id: doc.tokenId ?? null,
    channel_id: doc.channelId ?? null,
    family: doc.family,
    action: doc.action,
    model: doc.model,
    prompt: doc.prompt,
    status: doc.status,
    progress: doc.progress,
    created_at: iso(doc.createdAt),
    completed_at: doc.completedAt === null ? null : iso(doc.completedAt),
    reserved: doc.reserved,
    charged: doc.charged,
    error: doc.error && { code: doc.error.code, message: doc.error.reason },
    results: doc.results.map((r) => ({ kind: r.kind, url: r.url === null ? null : sign(r.url), content_type: r.contentType, text: r.text })),
    assets_expire_at: doc.assetsExpireAt === null ? null : iso(doc.assetsExpireAt),
    callback_url: doc.callbackUrl,
    sync: doc.sync,
  };
}

export function taskListRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/tasks',
      {
        config: API_ROUTE,
        schema: {
          tags: ['tasks'],
          summary: "The tasks of the signed-in user's account, newest first",
          querystring: TasksQuery,
          response: { 200: envelope(TaskPage) },
        },
        preHandler: requireSession(deps),
      },
      async (request) => {
        const user = currentUser(request);
        const { status } = request.query;
        const where = { accountId: user.accountId, ...(status ? { status } : {}) };
        return listPage(deps.views, VIEWS.accountTasks, where, { sortBy: 'seq', desc: true }, request.query, (doc: AccountTaskDoc) =>
          summaryOf(doc, (ref) => signAssetRefs(ref, deps.signer, doc.taskId)),
        );
      },
    );

    app.get(
      '/api/admin/tasks',
      {
        config: API_ROUTE,
        schema: {
          tags: ['admin'],
          summary: 'The task log across users, newest first, filtered; or every match as CSV',
          querystring: AdminTasksQuery,
          response: { 200: envelope(TaskPage) },
        },
        preHandler: requireSession(deps, 'admin'),
      },
      async (request, reply) => {
        const { p, size, status, user_id, token_id, model, family, channel_id, from, to, format } = request.query;
        let accountId: string | undefined;
        if (user_id !== undefined) {
          const user = await deps.views.get<UserDoc>(VIEWS.users, user_id);
          if (!user) throw new GatewayError(404, 'not_found', `user_id: no user ${user_id}`, 'user_id');
          accountId = user.doc.accountId;
        }
        const where = {
          ...(accountId ? { accountId } : {}),
          ...(status ? { status } : {}),
          ...(token_id ? { tokenId: token_id } : {}),
          ...(model ? { model } : {}),
          ...(family ? { family } : {}),
          ...(channel_id ? { channelId: channel_id } : {}),
        };
        const [fromSeconds, toSeconds] = [from, to].map((t) => (t === undefined ? undefined : Date.parse(t) / 1000));
        const inWindow = (doc: AccountTaskDoc) =>
          (fromSeconds === undefined || doc.createdAt >= fromSeconds) && (toSeconds === undefined || doc.createdAt <= toSeconds);
        const csv = format === 'csv';
        const windowed = from !== undefined || to !== undefined;
        // A window is walked whole (up to the export's bound), so its total is true.
        const wanted = csv || windowed ? CSV_ROWS : (p + 1) * size;
        // Newest first; a time window is walked until it is passed (tasks are created in submit order).
        const found: AccountTaskDoc[] = [];
        const tasks = newestFirst<AccountTaskDoc>(
          deps.views,
          VIEWS.accountTasks,
          where,
          inWindow,
          (oldest) => fromSeconds !== undefined && oldest.createdAt < fromSeconds - 3600,
        );
        for await (const chunk of tasks) {
          found.push(...chunk);
          if (found.length >= wanted) break;
        }
        if (csv) {
          const rows = found
            .slice(0, CSV_ROWS)
            .map((d) => [
              d.taskId,
              iso(d.createdAt),
              d.completedAt === null ? null : iso(d.completedAt),
              d.status,
              d.accountId,
              d.tokenId ?? null,
              d.family,
              d.action,
              d.model,
              d.channelId ?? null,
              d.reserved,
              d.charged,
              d.error?.code ?? null,
              d.prompt,
            ]);
          return sendCsv(reply, `tasks-${new Date().toISOString().slice(0, 10)}.csv`, [CSV_HEADER, ...rows].map(csvRecord).join(''));
        }
        const total = windowed ? found.length : await deps.views.count(VIEWS.accountTasks, where);
        const items = found.slice(p * size, (p + 1) * size).map((doc) => summaryOf(doc, (ref) => signAssetRefs(ref, deps.signer, doc.taskId)));
        return ok({ items, total, page: p, page_size: size });
      },
    );
  };
}
