/**
 * The plan of `POST /v1/videos` for `Vid-H3` (spec 4.13, limits 8) over a body its schema parsed
 * (schema.ts). Four modes: text only, first frame, first and last frame, multi-reference
 * (`metadata.content` media). The reservation is seconds (4–15, default 5) × resolution (`768P`
 * default, or `2K`). The upstream body is normalised: `size` holds the resolution, frames go in
 * `metadata.first_frame_image` / `last_frame_image`, multi-reference text goes into
 * `metadata.content` (a text item already there wins over `prompt`), and `metadata.ratio` gets
 * its default.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { refuse } from '../kit/fields.js';
import { given, secondsOf } from '../kit/schema.js';
import { type VideoPlan } from '../kit/video.js';
import { planners } from '../kit/plan.js';
import { contentOf, framesOf } from './references.js';
import { type ContentItem, VidH3Body, type VidH3Request, type VidH3Resolution } from './schema.js';

export const VID_H3_DEFAULT_SECONDS = 5;

/** Every field naming a URL, for the URL policy (src/families/kit/url-policy.ts). */
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

type Metadata = NonNullable<VidH3Request['metadata']>;

/** The resolution, given in one place or the same everywhere (each value checked by the schema). */
function resolutionOf(body: VidH3Request, metadata: Metadata): VidH3Resolution {
  let chosen: { param: string; value: VidH3Resolution } | undefined;
  for (const [param, value] of [
    ['size', body.size],
    ['resolution', body.resolution],
    ['metadata.resolution', metadata.resolution],
  ] as const) {
    if (!given(value)) continue;
    const normalised = value.trim().toUpperCase() as VidH3Resolution;
    if (chosen && chosen.value !== normalised) refuse(param, `${normalised} conflicts with ${chosen.param} ${chosen.value}; give the resolution once`);
    chosen = { param, value: normalised };
  }
  return chosen?.value ?? '768P';
}

/** The text every request needs: a content text item wins over `prompt`. */
function textOf(body: VidH3Request, contentText: string | undefined): string {
  const prompt = given(body.prompt) && body.prompt.trim() !== '' ? body.prompt : undefined;
  const text = contentText ?? prompt;
  if (text === undefined) refuse('prompt', 'every request needs text: a non-empty prompt or a text item in metadata.content');
  return text;
}

function plan(body: VidH3Request): VideoPlan {
  const model = body.model;
  const metadata = body.metadata ?? {};
  const seconds = secondsOf(body.seconds) ?? VID_H3_DEFAULT_SECONDS;
  const resolution = resolutionOf(body, metadata);
  const frames = framesOf(body, metadata);
  const content = contentOf(metadata);
  if (frames.first !== undefined && content.media.length > 0)
    refuse('metadata.content', 'frame images cannot be mixed with reference media; use either frames or metadata.content references');
  const text = textOf(body, content.text);
  const withMedia = frames.first !== undefined || content.media.length > 0;
  const ratio = metadata.ratio ?? (withMedia ? 'adaptive' : '16:9');
  const watermark = given(metadata.aigc_watermark) ? metadata.aigc_watermark === true || metadata.aigc_watermark === 'true' : undefined;
  const callbackUrl = metadata.callback_url ?? undefined;

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

/** The raw body may be JSON or a decoded form. */
export const { parsed: planVidH3, raw: planVidH3Request } = planners(VidH3Body, plan);
