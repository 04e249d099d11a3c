/**
 * `GET /api/tasks` (session): the tasks of the caller's account, newest first, every family in
 * one shape — what the web console lists. A task's full answer stays its family's query route
 * (with an API key); this is the account-wide summary a session can read.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountTaskDoc } from '../../../projections/account-tasks.js';
import { signAssetRefs } from '../../engine/media/sign-asset-refs.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { API_ROUTE, envelope, listPage, pageQuery } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

const TaskStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);

const TasksQuery = z.object({
  ...pageQuery(),
  status: TaskStatus.optional(),
});

const isoOrNull = z.string().nullable();

export const TaskSummary = z.object({
  id: z.string(),
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

const TaskPage = z.object({ items: z.array(TaskSummary), total: z.number().int(), page: z.number().int(), page_size: z.number().int() });

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/**
 * The answer for one task. Only the result URLs are signed (on this instance's base, and only for
 * the task's own files): a prompt or a result text is the client's or the upstream's words and
 * stays as written.
 */
function summaryOf(doc: AccountTaskDoc, sign: (ref: string) => string): z.infer<typeof TaskSummary> {
  return {
    id: doc.taskId,
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
  };
}
