/** `POST /v1/images/async/generations` and `GET …/{task_id}` (spec 4.9, 4.10). */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { EventDataOf } from '../../domain/events.js';
import { CallbackBodyUnavailableError } from '../../engine/outbound/callbacks.js';
import type { GatewayDeps } from '../../http/deps.js';
import { IMAGE_FAMILY, imageTaskProjection, submittedImageBody, subfamilyOf, type ImageTaskBody } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { ASYNC_IMAGE_URL_FIELDS, planAsyncImage } from './async-request.js';
import { AsyncImageBody, type AsyncImageRequest, AsyncImageSubmitAnswer, ImageTaskAnswer } from './schema.js';

function submitResponse(task: EventDataOf<'TaskSubmitted'>) {
  const body = submittedImageBody(task);
  // picgen async answers only these five fields (spec 2.1, last bullet).
  if (subfamilyOf(task.action) === 'picgen') return { id: body.id, task_id: body.task_id, status: body.status, model: body.model, created_at: body.created_at };
  return body;
}

/**
 * `required`: bytes that are gone (deleted after the retention) refuse the body instead of
 * leaving `b64_json` out — a callback retried with another body under the same `webhook-id`
 * would be a different message. The query answers without them (its view empties `data` then).
 */
export async function withInlineBase64(deps: GatewayDeps, body: ImageTaskBody, options: { required?: boolean } = {}) {
  // Nothing to inline: the (frozen, shared) body as it is, so its JSON can be kept too.
  if (!body.data.some((item) => item.b64_asset)) return body;
  const data = await Promise.all(
    body.data.map(async ({ b64_asset, ...rest }) => {
      if (!b64_asset) return rest;
      const asset = await deps.assets.get(b64_asset);
      if (!asset && options.required)
        throw new CallbackBodyUnavailableError('the result bytes the body inlines as b64_json were deleted after the asset retention');
      return asset ? { b64_json: asset.bytes.toString('base64'), ...rest } : rest;
    }),
  );
  return { ...body, data };
}

async function submitAsyncImage(deps: GatewayDeps, request: FastifyRequest, body: AsyncImageRequest) {
  const { task } = await submitFamilyTask(deps, request, {
    family: IMAGE_FAMILY,
    channelFamily: 'images',
    plan: () => planAsyncImage(body),
    urlFields: (plan) => ASYNC_IMAGE_URL_FIELDS[plan.family],
    actionOf: (plan) => `${plan.family}/${plan.action}`,
  });
  return submitResponse(task);
}

export function asyncImageRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;
    // Every refusal of the submit answers `code` = `invalid_request` (spec 7), while the query
    // keeps its codes (`task_not_exist`, 4.10).
    const submitConfig = { auth: 'bearer', errorShape: 'submit' } as const;

    app.post(
      '/v1/images/async/generations',
      {
        config: submitConfig,
        schema: {
          tags: ['images'],
          summary: 'Submit an async image task (pro-image, anime, vis, picgen)',
          headers: submitHeaders,
          body: AsyncImageBody,
          response: { 200: AsyncImageSubmitAnswer },
        },
      },
      async (request) => submitAsyncImage(deps, request, request.body),
    );

    app.get(
      '/v1/images/async/generations/:task_id',
      { config, schema: { tags: ['images'], summary: 'Query an async image task', params: taskIdParams, response: { 200: ImageTaskAnswer } } },
      async (request) => {
        const doc = await findOwnTask(deps, request, imageTaskProjection, taskNotExist(400));
        return withInlineBase64(deps, doc.body);
      },
    );
  };
}
