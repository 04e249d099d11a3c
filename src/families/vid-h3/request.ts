/**
 * Request rules of `POST /v1/videos` for `Vid-H3` (spec 4.13, limits 8). Four modes: text only,
 * first frame, first and last frame, multi-reference (`metadata.content` media). The reservation
 * is seconds (4–15, default 5) × resolution (`768P` default, or `2K`). The upstream body is
 * normalised: `size` holds the resolution, frames go in `metadata.first_frame_image` /
 * `last_frame_image`, multi-reference text goes into `metadata.content` (a text item already
 * there wins over `prompt`), and `metadata.ratio` gets its default.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { type Body, checkLength, field, isOneOf, MAX_PROMPT_CHARS, readBody, readCallbackUrl, readObject, readWholeSeconds, refuse } from '../kit/fields.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';
import { type ContentItem, readContent, readFrames } from './references.js';

export const VID_H3_MODEL = 'Vid-H3';
export const VID_H3_MIN_SECONDS = 4;
export const VID_H3_MAX_SECONDS = 15;
export const VID_H3_DEFAULT_SECONDS = 5;
export const VID_H3_RESOLUTIONS = ['768P', '2K'] as const;
export type VidH3Resolution = (typeof VID_H3_RESOLUTIONS)[number];
export const VID_H3_RATIOS = ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16', 'adaptive'] as const;

export const METADATA_KEYS = ['resolution', 'ratio', 'first_frame_image', 'last_frame_image', 'content', 'callback_url', 'aigc_watermark'] as const;
export const PIXELS = /^\s*\d+\s*[x×*X]\s*\d+\s*$/;
export const RESOLUTION_RULE = 'must be 768P or 2K';
export const pixelsRule = (value: string) => `pixel dimensions such as ${value.trim()} are not accepted; use 768P or 2K`;

/** Every field naming a URL, for the URL policy (src/families/url-policy.ts). */
export const VID_H3_URL_FIELDS: readonly UrlFieldSpec[] = [
  { path: 'input_reference' },
  { path: 'input_reference.image_url' },
  { path: 'image' },
  { path: 'images.*' },
  { path: 'metadata.first_frame_image' },
  { path: 'metadata.last_frame_image' },
  { path: 'metadata.content.*.url' },
  { path: 'metadata.callback_url', use: 'callback' },
];

export type VidH3Action = 'text' | 'first-frame' | 'first-last-frame' | 'multi-reference';

function readResolution(body: Body, metadata: Body): VidH3Resolution {
  let chosen: { param: string; value: VidH3Resolution } | undefined;
  for (const [param, value] of [
    ['size', field(body, 'size')],
    ['resolution', field(body, 'resolution')],
    ['metadata.resolution', field(metadata, 'resolution')],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value === 'string' && PIXELS.test(value)) refuse(param, pixelsRule(value));
    const normalised = typeof value === 'string' ? value.trim().toUpperCase() : undefined;
    if (!isOneOf(VID_H3_RESOLUTIONS, normalised)) refuse(param, RESOLUTION_RULE);
    if (chosen && chosen.value !== normalised) refuse(param, `${normalised} conflicts with ${chosen.param} ${chosen.value}; give the resolution once`);
    chosen = { param, value: normalised };
  }
  return chosen?.value ?? '768P';
}

/** The spec's metadata keys only: an unknown key would be dropped unseen, as if it had taken effect. */
function readMetadata(body: Body): Body {
  const metadata = readObject(body, 'metadata') ?? {};
  for (const key of Object.keys(metadata)) {
    if (!isOneOf(METADATA_KEYS, key)) refuse(`metadata.${key}`, `unknown key; metadata takes ${METADATA_KEYS.join(', ')}`);
  }
  return metadata;
}

/** `aigc_watermark` as a boolean; forms send `"true"` / `"false"`. */
function readWatermark(metadata: Body): boolean | undefined {
  const value = field(metadata, 'aigc_watermark');
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return refuse('metadata.aigc_watermark', 'must be true or false');
}

function readText(body: Body, contentText: string | undefined): string {
  const prompt = field(body, 'prompt');
  if (prompt !== undefined && typeof prompt !== 'string') refuse('prompt', 'must be a string');
  if (typeof prompt === 'string') checkLength(prompt, 'prompt', MAX_PROMPT_CHARS);
  const text = contentText ?? (typeof prompt === 'string' && prompt.trim() !== '' ? prompt : undefined);
  if (text === undefined) refuse('prompt', 'every request needs text: a non-empty prompt or a text item in metadata.content');
  return text;
}

function plan(raw: unknown): VideoPlan {
  const body = readBody(raw);
  const model = field(body, 'model');
  if (model !== VID_H3_MODEL) refuse('model', `required, must be ${VID_H3_MODEL}`);
  const metadata = readMetadata(body);
  const seconds = readWholeSeconds(field(body, 'seconds'), 'seconds', VID_H3_MIN_SECONDS, VID_H3_MAX_SECONDS) ?? VID_H3_DEFAULT_SECONDS;
  const resolution = readResolution(body, metadata);
  const frames = readFrames(body, metadata);
  const content = readContent(metadata);
  if (frames.first !== undefined && content.media.length > 0)
    refuse('metadata.content', 'frame images cannot be mixed with reference media; use either frames or metadata.content references');
  const text = readText(body, content.text);
  const withMedia = frames.first !== undefined || content.media.length > 0;
  const ratio = field(metadata, 'ratio') ?? (withMedia ? 'adaptive' : '16:9');
  if (!isOneOf(VID_H3_RATIOS, ratio)) refuse('metadata.ratio', `must be one of ${VID_H3_RATIOS.join(', ')}`);
  const watermark = readWatermark(metadata);
  const callbackUrl = metadata ? readCallbackUrl(metadata, 'callback_url', 'metadata.callback_url') : undefined;

  const forwarded: Record<string, unknown> = { ratio };
  let action: VidH3Action = 'text';
  if (content.media.length > 0) {
    action = 'multi-reference';
    forwarded.content = [...content.media, { type: 'text', text } satisfies ContentItem];
  } else if (frames.first !== undefined) {
    action = frames.last !== undefined ? 'first-last-frame' : 'first-frame';
    forwarded.first_frame_image = frames.first;
    if (frames.last !== undefined) forwarded.last_frame_image = frames.last;
  }
  if (watermark !== undefined) forwarded.aigc_watermark = watermark;
  const upstream: Record<string, unknown> = {
    model,
    seconds,
    size: resolution,
    ...(action === 'multi-reference' ? {} : { prompt: text }),
    metadata: forwarded,
  };
  return { action, model, units: seconds, tier: resolution, upstream, ...(callbackUrl !== undefined ? { callbackUrl } : {}) };
}

export function planVidH3Request(body: unknown): VideoPlanResult {
  return planned(() => plan(body));
}
