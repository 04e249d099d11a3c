/**
 * Callback signing secrets (`/api/user/webhook-secret`, session) and the delivery record of a
 * task's completion callback (`/api/callbacks/{task_id}`, session or bearer of the owner).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { CallbackDoc } from '../../../projections/callbacks.js';
import { rotateWebhookSecret, webhookSecretFor } from '../../engine/commands/webhook-secrets.js';
import { currentUser, keyOrSessionCaller, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { API_ROUTE, ok } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

export function webhookRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/user/webhook-secret', { config: API_ROUTE, schema: { tags: ['callbacks'] }, preHandler: requireSession(deps) }, async (request) => {
      const user = currentUser(request);
      return ok({ secret: await webhookSecretFor(deps.events, user.accountId, deps.clock()), scheme: 'standard-webhooks' });
    });

    app.post('/api/user/webhook-secret/rotate', { config: API_ROUTE, schema: { tags: ['callbacks'] }, preHandler: requireSession(deps) }, async (request) => {
      const user = currentUser(request);
      return ok({ secret: await rotateWebhookSecret(deps.events, user.accountId, deps.clock()), scheme: 'standard-webhooks' }, 'secret rotated');
    });

    app.get('/api/callbacks/:task_id', { config: API_ROUTE, schema: { tags: ['callbacks'] } }, async (request) => {
      const { accountId } = await keyOrSessionCaller(request, deps);
      const { task_id } = request.params as { task_id: string };
      const doc = /^[\w-]{1,128}$/.test(task_id) ? (await deps.views.get<CallbackDoc>(VIEWS.callbacks, task_id))?.doc : undefined;
      if (!doc || doc.accountId !== accountId) throw new GatewayError(404, 'not_found', `task_id: no callback for task ${task_id}`, 'task_id');
      return ok({
        task_id: doc.taskId,
        url: doc.url,
        state: doc.state,
        next_attempt_at: doc.nextAttemptAt === null ? null : new Date(doc.nextAttemptAt).toISOString(),
        attempts: doc.attempts.map((a) => ({ attempt: a.attempt, at: a.at, status: a.status, latency_ms: a.latencyMs, error: a.error ?? null })),
      });
    });
  };
}
