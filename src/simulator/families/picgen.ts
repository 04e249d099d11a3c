/**
 * Synchronous picgen upstream (spec 4.7 / 4.8, answer `{created, data, usage}`):
 *   POST {prefix}/v1/images/generations   for picgen models (dispatched here by sync-images.ts)
 *   POST {prefix}/v1/images/edits         JSON; references are counted, never fetched
 *   GET  {prefix}/redirect/metadata       a fixed redirect to the cloud metadata address, the
 *                                         result URL of `[sim:private-url]` (outbound-guard tests)
 * One image, or with `sequential_image_generation: auto` `max_images` (default 3, at most 15
 * minus the references), or with `layer_decomposition` three layers; `[sim:partial]` one fewer.
 * URL results by default, `b64_json` when asked. Validation is the gateway's job.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily } from '../context.js';
import { parseWith, plainErrorBody, requestMarkers, requestOrigin, requireBearer, SimHttpError, useSimErrorShape } from '../http.js';
import { parseImageSize } from '../image-size.js';
import { makePng } from '../media.js';
import { generate, imageTokens, resultFileUrl } from '../sync-common.js';
import { toUnixSeconds } from '../timeline.js';

export const PICGEN_EDITS_PATH = '/v1/images/edits';
export const METADATA_REDIRECT_PATH = '/redirect/metadata';
export const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';
const SEQUENTIAL_DEFAULT = 3;
const SEQUENTIAL_MAX_TOTAL = 15;
const LAYERS = 3;

const PicgenBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().optional(),
  size: z.string().optional(),
  image: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
  sequential_image_generation: z.enum(['auto', 'disabled']).optional(),
  sequential_image_generation_options: z.looseObject({ max_images: z.number().int().min(1).max(15).optional() }).nullish(),
  layer_decomposition: z.boolean().optional(),
  response_format: z.enum(['url', 'b64_json']).optional(),
});
type PicgenBody = z.infer<typeof PicgenBody>;

/** A picgen request on the shared images path: the model name says so. */
export function isPicgenRequest(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'model' in body && typeof body.model === 'string' && body.model.includes('picgen');
}

function outputs(body: PicgenBody, references: number): number {
  if (body.layer_decomposition === true) return LAYERS;
  if (body.sequential_image_generation !== 'auto') return 1;
  const asked = body.sequential_image_generation_options?.max_images ?? SEQUENTIAL_DEFAULT;
  return Math.max(1, Math.min(asked, SEQUENTIAL_MAX_TOTAL - references));
}

async function answer(request: FastifyRequest, ctx: SimContext, requireImage: boolean) {
  const body = parseWith(PicgenBody, request.body);
  if (requireImage && body.image === undefined) throw new SimHttpError(400, 'invalid_request', 'image: required');
  if (!requireImage && (body.prompt ?? '').trim() === '') throw new SimHttpError(400, 'invalid_request', 'prompt: required');
  const references = body.image === undefined ? 0 : Array.isArray(body.image) ? body.image.length : 1;
  const size = parseImageSize(body.size && body.size.toLowerCase() !== 'auto' ? body.size : body.layer_decomposition ? '1024x1024' : '2K');
  const markers = requestMarkers(request, [body.prompt]);
  const { fileId, payload, count } = await generate(markers, outputs(body, references), size, ctx);
  const origin = requestOrigin(request);
  const data = Array.from({ length: count }, (_, i) =>
    body.response_format === 'b64_json'
      ? { b64_json: makePng(size.width, size.height, `${fileId}:${i}`).toString('base64'), size: `${size.width}x${size.height}` }
      : { url: resultFileUrl(origin, ctx, fileId, i, [body.prompt]), size: `${size.width}x${size.height}` },
  );
  const output = count * imageTokens(size);
  return { model: body.model, created: toUnixSeconds(payload.t), data, usage: { generated_images: count, output_tokens: output, total_tokens: output } };
}

export const picgenGenerations = (request: FastifyRequest, ctx: SimContext) => answer(request, ctx, false);

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.post(PICGEN_EDITS_PATH, { onRequest: requireBearer }, async (request) => answer(request, ctx, true));
  app.get(METADATA_REDIRECT_PATH, async (_request, reply) => reply.redirect(METADATA_URL, 302));
}

export const picgenSyncSimFamily: SimFamily = { name: 'picgen-sync', routes, imageGenerator: { handles: isPicgenRequest, generate: picgenGenerations } };
