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
import type { FastifyReply } from 'fastify';
import type { GatewayDeps } from '../../http/deps.js';
import { nowSeconds } from '../../lib/time.js';
import type { ImageGenerator } from '../kit/shared-paths.js';
import { runFamilySyncCall, type SyncStream } from '../kit/sync-call.js';
import { completedEvents, imagesBody, SYNC_IMAGE_FAMILY } from './answers.js';
import { planImagesRequest, type ImageEcho } from './rules.js';
import { ImagesAnswer, ImagesBody, SYNC_IMAGE_MODELS } from './schema.js';
import { SseReply } from './sse.js';
import { callImages, callImagesStream } from './upstream.js';

interface ImagesStream extends SyncStream {
  /** An `image_generation.partial_image` event, as the upstream draws. */
  partial(image: object): void;
}

/** `stream: true`: the partial images as they come, then one `image_generation.completed` per image. */
function imagesStream(deps: GatewayDeps, reply: FastifyReply, echo: ImageEcho): ImagesStream {
  const sse = new SseReply(reply);
  return {
    keepAlive: () => sse.keepAlive(),
    partial: (image) => {
      const type = 'image_generation.partial_image';
      sse.send({ type, created_at: nowSeconds(deps.clock), ...echo, ...image }, type);
    },
    finish: async (call) => {
      for (const event of await completedEvents(deps, call, echo)) sse.send(event, event.type);
      sse.end();
    },
    fail: (err) => sse.fail(err, 'error'),
  };
}

/** std-image / pro-image on the shared `POST /v1/images/generations` (kit/shared-paths.ts). */
export const stdImageGenerator: ImageGenerator = {
  label: 'std-image, pro-image',
  models: SYNC_IMAGE_MODELS,
  default: true,
  streams: true,
  body: ImagesBody,
  answer: ImagesAnswer,
  description:
    'std-image, pro-image: `stream: true` answers `text/event-stream` instead: `image_generation.partial_image` events as the upstream draws, then one `image_generation.completed` per image (`b64_json`, size, quality, background, output_format, usage); a failure after the first event ends the stream with an `error` event. A retry of a streamed call answers the completed events only.',
  generate: (deps, request, reply) =>
    runFamilySyncCall(deps, request, reply, {
      family: SYNC_IMAGE_FAMILY,
      channelFamily: 'images',
      plan: planImagesRequest,
      delivery: (plan) => (plan.responseFormat === 'b64_json' || plan.stream ? 'b64' : 'url'),
      stream: (plan, reply) => (plan.stream ? imagesStream(deps, reply, plan.echo) : undefined),
      call: (ctx, plan, stream) =>
        stream ? callImagesStream(deps, ctx, plan.upstream, (partial) => stream.partial(partial)) : callImages(deps, ctx, plan.upstream),
      answer: (call) => imagesBody(deps, call),
    }),
};
