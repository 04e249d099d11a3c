/**
 * std-image / pro-image on `POST /v1/images/generations` (spec 4.6, images-style answer of 2.2
 * with `usage` and `revised_prompt`); the path is shared with the synchronous picgen models and
 * dispatched on the model by kit/shared-paths.ts.
 *
 * `stream: true` (std/pro only) answers `text/event-stream` with the events the openai
 * client's streaming images API parses: `image_generation.partial_image` (forwarded from the
 * upstream as it draws) and, once the task is settled, one `image_generation.completed` per
 * image with `b64_json` and that image's token `usage`. A retry of a streamed call with its
 * `Idempotency-Key` answers a stream of the `completed` events only (the partial images were
 * not kept). The task id is the `x-task-id` header: `GET /v1/images/generations/{id}`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { runSyncTask, type SyncRequest } from '../../engine/tasks/sync-task.js';
import type { Caller } from '../../engine/accounts/caller.js';
import { assertModelAllowed } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { metadataFor } from '../../http/request-meta.js';
import { acceptedPlan } from '../kit/plan.js';
import type { ImageGenerator } from '../kit/shared-paths.js';
import { completedEvents, imagesBody, SYNC_IMAGE_FAMILY } from './answers.js';
import { syncCallOptions } from '../kit/sync-call.js';
import { planImagesRequest, SYNC_IMAGE_MODELS, type SyncImagePlan } from './rules.js';
import { ImagesAnswer, ImagesBody } from './schema.js';
import { SseReply } from './sse.js';
import { callImages, callImagesStream } from './upstream.js';
import { nowSeconds } from '../../lib/time.js';

function syncRequest(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, request: FastifyRequest, reply: FastifyReply): SyncRequest {
  const delivery = plan.responseFormat === 'b64_json' || plan.stream ? 'b64' : 'url';
  return {
    family: SYNC_IMAGE_FAMILY,
    channelFamily: 'images',
    action: plan.action,
    model: plan.model,
    caller,
    request: plan.recorded,
    units: plan.units,
    metadata: metadataFor(request, deps.clock()),
    delivery,
    ...syncCallOptions(request, reply),
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
          sse.send({ type, created_at: nowSeconds(deps.clock), ...echo, ...partial }, type);
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

/** std-image / pro-image on the shared `POST /v1/images/generations` (kit/shared-paths.ts). */
export const stdImageGenerator: ImageGenerator = {
  label: 'std-image, pro-image',
  models: SYNC_IMAGE_MODELS,
  default: true,
  body: ImagesBody,
  answer: ImagesAnswer,
  description:
    'std-image, pro-image: `stream: true` answers `text/event-stream` instead: `image_generation.partial_image` events as the upstream draws, then one `image_generation.completed` per image (`b64_json`, size, quality, background, output_format, usage); a failure after the first event ends the stream with an `error` event. A retry of a streamed call answers the completed events only.',
  async generate(deps, request, reply, caller) {
    const plan = acceptedPlan(planImagesRequest(request.body));
    assertModelAllowed(caller, plan.model, deps.catalog);
    return plan.stream ? streamed(deps, plan, caller, request, reply) : plain(deps, plan, caller, request, reply);
  },
};
