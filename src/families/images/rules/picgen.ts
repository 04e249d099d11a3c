/**
 * `picgen` async models (spec 4.9): `prompt`, optional `image` / `images` reference URLs
 * (`images` wins), `size` passed through, and `metadata` merged into the upstream request.
 * No top-level `quality` or `n`, no sequential generation, no layer decomposition; one image.
 */
import { type Body, checkForwarded, type FamilyDraft, field, forbid, isPlainObject, readRef, readRefList, readString, refuse } from '../../kit/fields.js';

export const PICGEN_ASYNC_MAX_REFERENCES = 14;
export const PICGEN_ASYNC_SIZE_MAX = 32;

const UNSUPPORTED = ['sequential_image_generation', 'sequential_image_generation_options', 'layer_decomposition'] as const;

/** Keys `metadata` may not carry, with the reason (message after `metadata.<key>: `). */
const METADATA_RESERVED: Readonly<Record<string, string>> = {
  model: 'cannot change the model',
  prompt: 'give prompt at the top level',
  image: 'give reference images at the top level (image or images)',
  images: 'give reference images at the top level (image or images)',
  size: 'give size at the top level',
  n: 'not accepted by the picgen async route (one image per task)',
  sequential_image_generation: 'not supported on the picgen async route',
  sequential_image_generation_options: 'not supported on the picgen async route',
  layer_decomposition: 'not supported on the picgen async route',
};

function readMetadata(body: Body): Record<string, unknown> | undefined {
  const metadata = field(body, 'metadata');
  if (metadata === undefined) return undefined;
  if (!isPlainObject(metadata)) refuse('metadata', 'must be an object');
  for (const [key, reason] of Object.entries(METADATA_RESERVED)) {
    if (Object.hasOwn(metadata, key)) refuse(`metadata.${key}`, reason);
  }
  checkForwarded(metadata, 'metadata');
  return metadata;
}

export function picgenRules(body: Body, model: string, prompt: string): FamilyDraft {
  forbid(body, 'quality', 'not accepted by the picgen async route');
  forbid(body, 'n', 'not accepted by the picgen async route');
  for (const key of UNSUPPORTED) forbid(body, key, 'not supported on the picgen async route');
  const image = readRef(body, 'image', 'url');
  const images = readRefList(body, 'images', 'url', PICGEN_ASYNC_MAX_REFERENCES);
  const size = readString(body, 'size', { minLength: 1, maxLength: PICGEN_ASYNC_SIZE_MAX });
  const metadata = readMetadata(body);

  const upstream: Record<string, unknown> = { ...metadata, model, prompt };
  if (images !== undefined) upstream.images = images;
  else if (image !== undefined) upstream.image = image;
  if (size !== undefined) upstream.size = size;
  return { action: image !== undefined || images !== undefined ? 'edit' : 'generate', units: 1, upstream };
}
