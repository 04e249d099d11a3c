/**
 * Synchronous picgen: generations (spec 4.7, reached through the shared
 * `POST /v1/images/generations` route, which dispatches on the model) and
 * `POST /v1/images/edits` (4.8, JSON or multipart). Each call is a synchronous task:
 * reserved on the images asked for (sequential: the most the upstream may return) at the
 * size tier, settled on the images returned. Answer: `{created, data:[{url, b64_json?}]}`;
 * `url` is the re-hosted gateway URL, or the upstream's when the gateway could not fetch it.
 * `Idempotency-Key` and the `x-task-id` query (`GET /v1/images/{generations,edits}/{id}`) as
 * for every synchronous call (engine/tasks/sync-task.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { runFamilySyncCall } from '../kit/sync-call.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { acceptForms } from '../kit/multipart.js';
import { submitHeaders } from '../kit/schema.js';
import type { PlanResult } from '../kit/plan.js';
import { picgenBody, picgenLayout } from './answer.js';
import { multipartBody } from './multipart.js';
import { planPicgenEdit, planPicgenGeneration, type PicgenPlan } from './request.js';
import { EditBody, PicgenAnswer } from './schema.js';
import { callPicgen, PICGEN_EDITS_PATH, PICGEN_GENERATIONS_PATH } from './upstream.js';

/** TaskSubmitted family of the synchronous picgen calls. */
export const PICGEN_SYNC_FAMILY = 'picgen-sync';

/** Reference images (one string or a list; files arrive as data URIs), for the URL policy. */
const PICGEN_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'image' }, { path: 'image.*' }];

/** A picgen call on `path` (the body of a multipart edit is its decoded form). */
function runPicgen(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, plan: (body: unknown) => PlanResult<PicgenPlan>, path: string) {
  return runFamilySyncCall(deps, request, reply, {
    family: PICGEN_SYNC_FAMILY,
    channelFamily: 'images',
    plan,
    urlFields: PICGEN_URL_FIELDS,
    call: async (ctx, plan) => {
      const answer = await callPicgen(deps, ctx, path, plan.upstream);
      return { ...answer, snapshot: { ...answer.snapshot, answer: picgenLayout(answer.slots, plan.responseFormat) } };
    },
    answer: (call) => picgenBody(deps, call),
  });
}

/** `POST /v1/images/generations` for a picgen model (kit/shared-paths.ts). */
export function picgenGeneration(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply) {
  return runPicgen(deps, request, reply, planPicgenGeneration, PICGEN_GENERATIONS_PATH);
}

const EDIT_DESCRIPTION = [
  'A JSON body, or the same fields as `multipart/form-data`: files under `image`, `image[]` or `image[n]` (30 MiB each) become data URIs; `n`, `seed`, `guidance_scale` are read as numbers, `stream`, `watermark`, `optimize_prompt`, `layer_decomposition` as true/false, `optimize_prompt_options`, `sequential_image_generation_options`, `tools` as JSON.',
  'A synchronous call: the answer carries the images. Its task id is the `x-task-id` response header: `GET /v1/images/edits/{id}` answers the result again, and a retry with the same `Idempotency-Key` and body answers the same result without charging again.',
].join('\n\n');

export function picgenEditRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;
    const formBody = await acceptForms(app, multipartBody);

    app.post(
      PICGEN_EDITS_PATH,
      {
        config,
        preValidation: formBody,
        schema: {
          tags: ['images'],
          summary: 'Synchronous picgen image-to-image (JSON or multipart)',
          description: EDIT_DESCRIPTION,
          consumes: ['application/json', 'multipart/form-data'],
          headers: submitHeaders,
          body: EditBody,
          response: { 200: PicgenAnswer },
        },
      },
      async (request, reply) => runPicgen(deps, request, reply, planPicgenEdit, PICGEN_EDITS_PATH),
    );
  };
}
