/**
 * `POST /art/submit/{imagine|describe|blend|change}` and `GET /art/task/{id}/fetch` (spec 2.7,
 * 3.5, 4.14). Submit answers `{code: 1, description: "Submit success", result: <task id>,
 * properties: {}}`; errors `{code: 4, description, result: null}` (9 for server errors); a
 * missing or another account's task is HTTP 404 `{code: 4, description: "task_no_found"}`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { submitIdempotently } from '../../engine/idempotency.js';
import { submitTask } from '../../engine/submit.js';
import { assertModelAllowed, authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { taskViewFor } from '../../http/task-views.js';
import { ART_FAMILY, artTaskProjection } from '../../../projections/art-task.js';
import { changeParent } from './parent.js';
import { enforceUrlPolicyOn } from '../url-policy.js';
import { ART_SUBMITS, ART_URL_FIELDS, type ArtPlan, type ArtSubmit, planArtRequest } from './request.js';

export const SUBMIT_SUCCESS = 'Submit success';

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return Array.isArray(key) ? key[0] : key;
}

/** CHANGE: the upstream request names the job and channel of the task changed, and its prompt. */
async function upstreamRequest(deps: GatewayDeps, plan: ArtPlan, accountId: string): Promise<Record<string, unknown>> {
  if (plan.parentTaskId === undefined) return plan.upstream;
  const parent = await changeParent(deps, plan.parentTaskId, accountId, plan.action);
  return { ...plan.upstream, prompt: parent.prompt, parentUpstreamTaskId: parent.upstreamTaskId, parentChannelId: parent.channelId };
}

async function submit(deps: GatewayDeps, request: FastifyRequest, kind: ArtSubmit) {
  const caller = await authenticate(request, deps.tokens, deps.clock());
  const planned = planArtRequest(kind, request.body);
  if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
  const { plan } = planned;
  assertModelAllowed(caller, plan.model, deps.catalog);
  await enforceUrlPolicyOn(deps, request.body, ART_URL_FIELDS);
  const upstream = await upstreamRequest(deps, plan, caller.accountId);
  const idempotencyKey = idempotencyKeyOf(request);
  const metadata = metadataFor(request, deps.clock());
  const outcome = await submitIdempotently(deps, { key: idempotencyKey, tokenId: caller.tokenId, body: { kind, body: request.body }, metadata }, (ids) =>
    submitTask(deps, {
      family: ART_FAMILY,
      channelFamily: 'art',
      action: plan.action,
      model: plan.model,
      caller,
      request: upstream,
      units: plan.units,
      ...ids,
      ...(plan.callbackUrl ? { callbackUrl: plan.callbackUrl } : {}),
      metadata,
    }),
  );
  return { code: 1, description: SUBMIT_SUCCESS, result: outcome.task.taskId, properties: {} };
}

export function artRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'art');

    for (const kind of ART_SUBMITS) {
      app.post(`/art/submit/${kind}`, { schema: { tags: ['art'], summary: `Submit an art ${kind.toUpperCase()} task (billed as art_${kind})` } }, async (request) =>
        submit(deps, request, kind),
      );
    }

    app.get('/art/task/:id/fetch', { schema: { tags: ['art'], summary: 'Query an art task' } }, async (request) => {
      const caller = await authenticate(request, deps.tokens, deps.clock());
      const { id } = request.params as { id: string };
      const doc = await taskViewFor(deps, artTaskProjection, id, caller.accountId);
      if (!doc) throw new GatewayError(404, 'task_no_found', 'task_no_found', 'id');
      return doc.body;
    });
  };
}
