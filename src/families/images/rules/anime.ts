/**
 * `anime` models on the async route (spec 4.9): one optional reference `image` (URL or Base64
 * data URI) enables image-to-image; `n` 1–4 (default 1); `size` in pixels (default 1024x1024).
 * The schema (../schema.ts) checks every field; this applies the defaults.
 */
import { type FamilyDraft, parsePixelSize } from '../../kit/fields.js';
import type { AnimeRequest } from '../schema.js';

export const ANIME_MAX_N = 4;
export const ANIME_DEFAULT_SIZE = '1024x1024';
export const ANIME_MIN_SIDE = 64;
export const ANIME_MAX_SIDE = 4096;

export const ANIME_SIZE_RULE = `must be <width>x<height> pixels, each side ${ANIME_MIN_SIDE} to ${ANIME_MAX_SIDE}, e.g. 1024x1024, 832x1216, 1216x832`;

export function isAnimeSize(size: string): boolean {
  const pixels = parsePixelSize(size);
  const inRange = (side: number): boolean => side >= ANIME_MIN_SIDE && side <= ANIME_MAX_SIDE;
  return pixels !== undefined && inRange(pixels.width) && inRange(pixels.height);
}

export function animeRules(body: AnimeRequest): FamilyDraft {
  const image = body.image ?? undefined;
  const n = body.n ?? 1;
  const upstream: Record<string, unknown> = { model: body.model, prompt: body.prompt };
  if (image !== undefined) upstream.image = image;
  upstream.n = n;
  upstream.size = body.size ?? ANIME_DEFAULT_SIZE;
  return { action: image !== undefined ? 'edit' : 'generate', units: n, upstream };
}
