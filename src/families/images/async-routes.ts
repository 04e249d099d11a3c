/** `POST /v1/images/async/generations` and `GET …/{task_id}` (spec 4.9, 4.10). */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { EventDataOf } from '../../domain/events.js';
import { submitIdempotently } from '../../engine/idempotency.js';
import { submitTask } from '../../engine/submit.js';
import { assertModelAllowed, authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { taskViewFor } from '../../http/task-views.js';
import { IMAGE_FAMILY, imageTaskProjection, submittedImageBody, subfamilyOf, type ImageTaskBody } from '../../../projections/image-task.js';
import { enforceUrlPolicyOn } from '../url-policy.js';
import { ASYNC_IMAGE_URL_FIELDS, planAsyncImageRequest } from './async-request.js';

function submitResponse(task: EventDataOf<'TaskSubmitted'>) {
  const body = submittedImageBody(task);
  // picgen async answers only these five fields (spec 2.1, last bullet).
  if (subfamilyOf(task.action) === 'picgen') return { id: body.id, task_id: body.task_id, status: body.status, model: body.model, created_at: body.created_at };
  return body;
}

export async function withInlineBase64(deps: GatewayDeps, body: ImageTaskBody) {
  const data = await Promise.all(
    body.data.map(async ({ b64_asset, ...rest }) => {
      if (!b64_asset) return rest;
      const asset = await deps.assets.get(b64_asset);
      return asset ? { b64_json: asset.bytes.toString('base64'), ...rest } : rest;
    }),
  );
  return { ...body, data };
}

async function submitAsyncImage(deps: GatewayDeps, request: FastifyRequest) {
  const caller = await authenticate(request, deps.tokens, deps.clock());
  const planned = planAsyncImageRequest(request.body);
  if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
  const { plan } = planned;
  assertModelAllowed(caller, plan.model, deps.catalog);
  await enforceUrlPolicyOn(deps, request.body, ASYNC_IMAGE_URL_FIELDS[plan.family]);
  const key = request.headers['idempotency-key'];
  const idempotencyKey = Array.isArray(key) ? key[0] : key;
  const metadata = metadataFor(request, deps.clock());
  const outcome = await submitIdempotently(deps, { key: idempotencyKey, tokenId: caller.tokenId, body: request.body, metadata }, (ids) =>
    submitTask(deps, {
      family: IMAGE_FAMILY,
      channelFamily: 'images',
      action: `${plan.family}/${plan.action}`,
      model: plan.model,
      caller,
      request: plan.upstream,
      units: plan.units,
      ...ids,
      metadata,
    }),
  );
  return submitResponse(outcome.task);
}

export function asyncImageRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    // A context of its own: every refusal of the submit answers `code` = `invalid_request`
    // (spec 7), while the query keeps its codes (`task_not_exist`, 4.10).
    await app.register(async (submitScope) => {
      useErrorShape(submitScope, 'submit');
      submitScope.post('/v1/images/async/generations', { schema: { tags: ['images'], summary: 'Submit an async image task (pro-image, anime, vis, picgen)' } }, async (request) =>
        submitAsyncImage(deps, request),
      );
    });

    app.get('/v1/images/async/generations/:task_id', { schema: { tags: ['images'], summary: 'Query an async image task' } }, async (request) => {
      const caller = await authenticate(request, deps.tokens, deps.clock());
      const { task_id } = request.params as { task_id: string };
      const doc = await taskViewFor(deps, imageTaskProjection, task_id, caller.accountId);
      if (!doc) throw new GatewayError(400, 'task_not_exist', `task_id: no task ${task_id}`, 'task_id');
      return withInlineBase64(deps, doc.body);
    });
  };
}
