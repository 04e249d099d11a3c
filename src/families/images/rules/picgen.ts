/**
 * `picgen` async models (spec 4.9): `prompt`, optional `image` / `images` reference URLs
 * (`images` wins), `size` passed through, and `metadata` merged into the upstream request.
 * No top-level `quality` or `n`, no sequential generation, no layer decomposition; one image.
 * The schema (../schema.ts) checks every field; this builds the upstream body.
 */
import type { FamilyDraft } from '../../kit/fields.js';
import type { PicgenRequest } from '../schema.js';

export const PICGEN_ASYNC_MAX_REFERENCES = 14;
export const PICGEN_ASYNC_SIZE_MAX = 32;

export const NOT_ACCEPTED = 'not accepted by the picgen async route';
export const NOT_SUPPORTED = 'not supported on the picgen async route';
export const UNSUPPORTED = ['sequential_image_generation', 'sequential_image_generation_options', 'layer_decomposition'] as const;

/** Keys `metadata` may not carry, with the reason (message after `metadata.<key>: `). */
export const METADATA_RESERVED = {
  model: 'cannot change the model',
  prompt: 'give prompt at the top level',
  image: 'give reference images at the top level (image or images)',
  images: 'give reference images at the top level (image or images)',
  size: 'give size at the top level',
  n: 'not accepted by the picgen async route (one image per task)',
  sequential_image_generation: NOT_SUPPORTED,
  sequential_image_generation_options: NOT_SUPPORTED,
  layer_decomposition: NOT_SUPPORTED,
} as const;

export function picgenRules(body: PicgenRequest): FamilyDraft {
  const image = body.image ?? undefined;
  const images = body.images ?? undefined;
  const size = body.size ?? undefined;
  const upstream: Record<string, unknown> = { ...body.metadata, model: body.model, prompt: body.prompt };
  if (images !== undefined) upstream.images = images;
  else if (image !== undefined) upstream.image = image;
  if (size !== undefined) upstream.size = size;
  return { action: image !== undefined || images !== undefined ? 'edit' : 'generate', units: 1, upstream };
}
