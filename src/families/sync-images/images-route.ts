/**
 * `POST /v1/images/generations`: one path, dispatched on the model — std-image / pro-image
 * here (spec 4.6, images-style answer of 2.2 with `usage` and `revised_prompt`), the six
 * synchronous picgen models in src/families/picgen (4.7).
 *
 * `stream: true` (std/pro only) answers `text/event-stream` with the events the openai
 * client's streaming images API parses: `image_generation.partial_image` (forwarded from the
 * upstream as it draws) and, once the task is settled, one `image_generation.completed` per
 * image with `b64_json` and that image's token `usage`.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { picgenSyncModels } from '../../bootstrap/model-catalog.js';
import { runSyncTask, type SyncOutcome } from '../../engine/sync-task.js';
import type { UpstreamResult } from '../../engine/upstream.js';
import { assertModelAllowed, authenticate, type Caller } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { isPlainObject } from '../images/rules/shared.js';
import { isPicgenSyncModel } from '../picgen/capabilities.js';
import { picgenGeneration } from '../picgen/routes.js';
import { SYNC_IMAGE_FAMILY } from './chat-route.js';
import { isSyncImageModel, planImagesRequest, type SyncImagePlan } from './rules.js';
import { SseReply } from './sse.js';
import { callImages, callImagesStream, IMAGES_PATH } from './upstream.js';

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

/** The images-style `usage` of 2.2, every figure an integer. */
export function imagesUsageOf(raw: unknown) {
  const usage = isPlainObject(raw) ? raw : {};
  const details = isPlainObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const input = int(usage.input_tokens);
  const output = int(usage.output_tokens);
  return {
    total_tokens: int(usage.total_tokens) || input + output,
    input_tokens: input,
    output_tokens: output,
    input_tokens_details: { text_tokens: int(details.text_tokens), image_tokens: int(details.image_tokens) },
  };
}

const nowSeconds = (deps: GatewayDeps): number => Math.floor(deps.clock().getTime() / 1000);

function run(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, metadata: ReturnType<typeof metadataFor>, call: Parameters<typeof runSyncTask>[2]): Promise<SyncOutcome> {
  const delivery = plan.responseFormat === 'b64_json' || plan.stream ? 'b64' : 'url';
  return runSyncTask(deps, { family: SYNC_IMAGE_FAMILY, channelFamily: 'images', action: plan.action, model: plan.model, caller, request: plan.recorded, units: plan.units, metadata, delivery }, call);
}

async function plain(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, metadata: ReturnType<typeof metadataFor>) {
  let images: UpstreamResult[] = [];
  const outcome = await run(deps, plan, caller, metadata, async (ctx) => {
    const answer = await callImages(deps, ctx, plan.upstream);
    images = answer.results;
    return answer;
  });
  const data = outcome.results.map((r, i) => {
    const revised = r.revisedPrompt !== undefined ? { revised_prompt: r.revisedPrompt } : {};
    return plan.responseFormat === 'b64_json' ? { b64_json: images[i]?.b64 ?? '', ...revised } : { url: r.url ?? '', ...revised };
  });
  return { created: nowSeconds(deps), data, usage: imagesUsageOf(outcome.snapshot?.usage) };
}

async function streamed(deps: GatewayDeps, plan: SyncImagePlan, caller: Caller, metadata: ReturnType<typeof metadataFor>, reply: FastifyReply) {
  const sse = new SseReply(reply);
  const echo = plan.echo;
  try {
    let images: UpstreamResult[] = [];
    const outcome = await run(deps, plan, caller, metadata, async (ctx) => {
      sse.keepAlive();
      const answer = await callImagesStream(deps, ctx, plan.upstream, (partial) => {
        const type = 'image_generation.partial_image';
        sse.send({ type, created_at: nowSeconds(deps), ...echo, ...partial }, type);
      });
      images = answer.results;
      return answer;
    });
    const usages = Array.isArray(outcome.snapshot?.usages) ? outcome.snapshot.usages : [];
    outcome.results.forEach((_, i) => {
      const type = 'image_generation.completed';
      sse.send({ type, b64_json: images[i]?.b64 ?? '', created_at: nowSeconds(deps), ...echo, usage: imagesUsageOf(usages[i]) }, type);
    });
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
      if (isPicgenSyncModel(model)) return picgenGeneration(deps, request, caller);
      if (model !== undefined && model !== null && !isSyncImageModel(model)) {
        throw new GatewayError(400, 'invalid_request', `model: must be std-image, pro-image or one of ${picgenSyncModels.join(', ')}`, 'model');
      }
      const planned = planImagesRequest(request.body);
      if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
      const { plan } = planned;
      assertModelAllowed(caller, plan.model, deps.catalog);
      const metadata = metadataFor(request, deps.clock());
      return plan.stream ? streamed(deps, plan, caller, metadata, reply) : plain(deps, plan, caller, metadata);
    });
  };
}
