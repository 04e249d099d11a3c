/**
 * `anime` models on the async route (spec 4.9): one optional reference `image` (URL or Base64
 * data URI) enables image-to-image; `n` 1–4 (default 1); `size` in pixels (default 1024x1024).
 */
import { type Body, type FamilyDraft, field, parsePixelSize, readInt, readRef, refuse } from '../../kit/fields.js';

export const ANIME_MAX_N = 4;
export const ANIME_DEFAULT_SIZE = '1024x1024';
export const ANIME_MIN_SIDE = 64;
export const ANIME_MAX_SIDE = 4096;

function readSize(body: Body): string {
  const size = field(body, 'size');
  if (size === undefined) return ANIME_DEFAULT_SIZE;
  const pixels = typeof size === 'string' ? parsePixelSize(size) : undefined;
  const inRange = (side: number): boolean => side >= ANIME_MIN_SIDE && side <= ANIME_MAX_SIDE;
  if (!pixels || !inRange(pixels.width) || !inRange(pixels.height)) {
    refuse('size', `must be <width>x<height> pixels, each side ${ANIME_MIN_SIDE} to ${ANIME_MAX_SIDE}, e.g. 1024x1024, 832x1216, 1216x832`);
  }
  return `${pixels.width}x${pixels.height}`;
}

export function animeRules(body: Body, model: string, prompt: string): FamilyDraft {
  if (field(body, 'images') !== undefined) refuse('images', 'not accepted by anime models; give exactly one reference as image');
  if (Array.isArray(field(body, 'image'))) refuse('image', 'exactly one reference, given as one string (not an array)');
  const image = readRef(body, 'image', 'url-or-data');
  const n = readInt(body, 'n', 1, ANIME_MAX_N) ?? 1;
  const size = readSize(body);

  const upstream: Record<string, unknown> = { model, prompt };
  if (image !== undefined) upstream.image = image;
  upstream.n = n;
  upstream.size = size;
  return { action: image !== undefined ? 'edit' : 'generate', units: n, upstream };
}
