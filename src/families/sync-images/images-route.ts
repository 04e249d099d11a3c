/**
 * `POST /v1/images/generations`: one path, dispatched on the model — std-image / pro-image
 * here (spec 4.6, images-style answer of 2.2 with `usage` and `revised_prompt`), the six
 * synchronous picgen models in src/families/picgen (4.7).
 *
 * `stream: true` (std/pro only) answers `text/event-stream` with the events the openai
 * client's streaming images API parses: `image_generation.partial_image` (forwarded from the
 * upstream as it draws) and, once the task is settled, one `image_generation.completed` per
 * image with `b64_json` and that image's token `usage`. A retry of a streamed call with its
 * `Idempotency-Key` answers a stream of the `completed` events only (the partial images were
 * not kept). The task id is the `x-task-id` header: `GET /v1/images/generations/{id}`.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { picgenSyncModels } from '../../bootstrap/model-catalog.js';
import { runSyncTask, type SyncRequest } from '../../engine/sync-task.js';
import { assertModelAllowed, authenticate, type Caller } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { isPlainObject } from '../images/rules/shared.js';
import { isPicgenSyncModel } from '../picgen/capabilities.js';
import { picgenGeneration } from '../picgen/routes.js';
import { completedEvents, imagesBody, SYNC_IMAGE_FAMILY } from './answers.js';
import { syncCallOptions } from './call-options.js';
import { isSyncImageModel, planImagesRequest, type SyncImagePlan } from './rules.js';
import { SseReply } from './sse.js';
import { callImages, callImagesStream, IMAGES_PATH } from './upstream.js';

const nowSeconds = (deps: GatewayDeps): number => Math.floor(deps.clock().getTime() / 1000);

function syncRequest(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, request: FastifyRequest, reply: FastifyReply): SyncRequest {
  const delivery = plan.responseFormat === 'b64_json' || plan.stream ? 'b64' : 'url';
  return {
    family: SYNC_IMAGE_FAMILY, channelFamily: 'images', action: plan.action, model: plan.model, caller, request: plan.recorded, units: plan.units,
    metadata: metadataFor(request, deps.clock()), delivery, ...syncCallOptions(request, reply),
  };
}

async function plain(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, request: FastifyRequest, reply: FastifyReply) {
  const { call } = await runSyncTask(deps, syncRequest(deps, plan, caller, request, reply), (ctx) => callImages(deps, ctx, plan.upstream));
  return imagesBody(deps, call);
}

async function streamed(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, request: FastifyRequest, reply: FastifyReply) {
  const sse = new SseReply(reply);
  const echo = plan.echo;
  try {
    const base = syncRequest(deps, plan, caller, request, reply);
    const { call } = await runSyncTask(
      deps,
      {
        ...base,
        onTask: (taskId, replayed) => {
          base.onTask?.(taskId, replayed);
          if (replayed) sse.keepAlive();
        },
      },
      async (ctx) => {
        sse.keepAlive();
        return callImagesStream(deps, ctx, plan.upstream, (partial) => {
          const type = 'image_generation.partial_image';
          sse.send({ type, created_at: nowSeconds(deps), ...echo, ...partial }, type);
        });
      },
    );
    for (const event of await completedEvents(deps, call, echo)) sse.send(event, event.type);
    sse.end();
  } catch (err) {
    sse.fail(err, 'error');
  }
  return reply;
}

export function imagesRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    app.post(IMAGES_PATH, { schema: { tags: ['images'], summary: 'Synchronous image generation (std-image, pro-image, picgen)' } }, async (request, reply) => {
      const caller = await authenticate(request, deps.tokens, deps.clock());
      const model = isPlainObject(request.body) ? request.body.model : undefined;
      if (isPicgenSyncModel(model)) return picgenGeneration(deps, request, reply, caller);
      if (model !== undefined && model !== null && !isSyncImageModel(model)) {
        throw new GatewayError(400, 'invalid_request', `model: must be std-image, pro-image or one of ${picgenSyncModels.join(', ')}`, 'model');
      }
      const planned = planImagesRequest(request.body);
      if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
      const { plan } = planned;
      assertModelAllowed(caller, plan.model, deps.catalog);
      return plan.stream ? streamed(deps, plan, caller, request, reply) : plain(deps, plan, caller, request, reply);
    });
  };
}
