/**
 * Request rules of the `clip` submit paths (spec 4.12). Both paths take the same body;
 * text2video needs a prompt and takes no frame images, image2video needs `image` (first frame)
 * and may add `image_tail` (last frame). Field names follow the common clients of this family:
 * `image`, `image_tail`, `duration`, `aspect_ratio`, `cfg_scale`. Defaults are sent upstream
 * explicitly (duration 5, aspect ratio 1:1, guidance 0.5, mode std — pro for clip-v2-master).
 * Frame images are strings forwarded unchanged: an http/https URL (under the URL policy), a
 * Base64 image data URI or raw Base64, as the upstream takes them.
 * The reservation is duration seconds × mode.
 */
import { clipModels } from './catalog.js';
import { isImageDataUri } from '../kit/fields.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import {
  type Body,
  checkForwarded,
  field,
  isHttpUrl,
  isOneOf,
  readBody,
  readEnum,
  readObject,
  readOptionalString,
  readWholeSeconds,
  refuse,
} from '../kit/fields.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';

export type ClipAction = 'text2video' | 'image2video';
export const CLIP_ACTIONS: readonly ClipAction[] = ['text2video', 'image2video'];
export const CLIP_MODES = ['std', 'pro'] as const;
const PRO_ONLY_MODELS: readonly string[] = ['clip-v2-master'];

export const CLIP_DEFAULTS = { duration: 5, aspect_ratio: '1:1', cfg_scale: 0.5 } as const;
export const CLIP_MAX_DURATION = 3600;
export const ASPECT_RATIO = /^\d{1,2}:\d{1,2}$/;
export const ASPECT_RATIO_RULE = 'must be a ratio such as 16:9, 9:16 or 1:1';
const RAW_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
export const FRAME_RULE = 'must be an image: an http/https URL, a data:image/<format>;base64,<data> URI or raw Base64';

/** A frame image as the upstream takes it: a URL, a Base64 image data URI or raw Base64. */
export function isFrameImage(text: string): boolean {
  return isHttpUrl(text) || isImageDataUri(text) || RAW_BASE64.test(text);
}

/** Every field naming a URL, for the URL policy; `metadata` is forwarded as given. */
export const CLIP_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'image' }, { path: 'image_tail' }, { path: 'metadata.**' }];

/** Fields of the recorded request that take raw Base64, stored aside when large (engine/media/inline-inputs.ts). */
export const CLIP_BASE64_FIELDS: readonly string[] = ['image', 'image_tail'];

function readModel(body: Body): (typeof clipModels)[number] {
  // `model_name` is the family's field; `model` the compatibility alias it wins over.
  const given =
    field(body, 'model_name') !== undefined ? { param: 'model_name', value: field(body, 'model_name') } : { param: 'model', value: field(body, 'model') };
  if (given.value === undefined) refuse('model_name', `required, one of ${clipModels.join(', ')}`);
  if (!isOneOf(clipModels, given.value)) refuse(given.param, `must be one of ${clipModels.join(', ')}`);
  return given.value;
}

function readMode(body: Body, model: string): (typeof CLIP_MODES)[number] {
  const mode = readEnum(body, 'mode', CLIP_MODES);
  const proOnly = PRO_ONLY_MODELS.includes(model);
  if (proOnly && mode === 'std') refuse('mode', `${model} only offers pro`);
  return mode ?? (proOnly ? 'pro' : 'std');
}

function readFrame(body: Body, key: string): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isFrameImage(value)) refuse(key, FRAME_RULE);
  return value;
}

function readCfgScale(body: Body): number {
  const value = field(body, 'cfg_scale');
  if (value === undefined) return CLIP_DEFAULTS.cfg_scale;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) refuse('cfg_scale', 'must be a number from 0 to 1');
  return value;
}

function readAspectRatio(body: Body): string {
  const value = field(body, 'aspect_ratio');
  if (value === undefined) return CLIP_DEFAULTS.aspect_ratio;
  if (typeof value !== 'string' || !ASPECT_RATIO.test(value)) refuse('aspect_ratio', ASPECT_RATIO_RULE);
  return value;
}

function plan(raw: unknown, action: ClipAction): VideoPlan {
  const body = readBody(raw);
  const model = readModel(body);
  const mode = readMode(body, model);
  const prompt = readOptionalString(body, 'prompt');
  if (action === 'text2video' && (prompt === undefined || prompt.trim() === '')) refuse('prompt', 'required for text2video, a non-empty string');
  const negativePrompt = readOptionalString(body, 'negative_prompt');
  const image = readFrame(body, 'image');
  const imageTail = readFrame(body, 'image_tail');
  if (action === 'text2video' && (image !== undefined || imageTail !== undefined)) {
    refuse(image !== undefined ? 'image' : 'image_tail', 'frame images go to /clip/v1/videos/image2video');
  }
  if (action === 'image2video' && image === undefined) refuse('image', 'required for image2video: the first-frame image');
  const duration = readWholeSeconds(field(body, 'duration'), 'duration', 1, CLIP_MAX_DURATION) ?? CLIP_DEFAULTS.duration;
  const aspectRatio = readAspectRatio(body);
  const cfgScale = readCfgScale(body);
  const metadata = readObject(body, 'metadata');
  if (metadata !== undefined) checkForwarded(metadata, 'metadata');

  const upstream: Record<string, unknown> = { model_name: model };
  if (prompt !== undefined) upstream.prompt = prompt;
  if (negativePrompt !== undefined) upstream.negative_prompt = negativePrompt;
  if (image !== undefined) upstream.image = image;
  if (imageTail !== undefined) upstream.image_tail = imageTail;
  Object.assign(upstream, { mode, duration, aspect_ratio: aspectRatio, cfg_scale: cfgScale });
  if (metadata !== undefined) upstream.metadata = metadata;
  return { action, model, units: duration, tier: mode, upstream };
}

export function planClipRequest(body: unknown, action: ClipAction): VideoPlanResult {
  return planned(() => plan(body, action));
}
