/**
 * The plan of the `clip` submit paths (spec 4.12) over a body their schema parsed (schema.ts):
 * what depends on the model (clip-v2-master only in pro), the bounds of the forwarded `metadata`,
 * and the upstream body. Field names follow the common clients of this family. Defaults are
 * sent upstream explicitly (duration 5, aspect ratio 1:1, guidance 0.5, mode std — pro for
 * clip-v2-master). Frame images are strings forwarded unchanged: an http/https URL (under the URL
 * policy), a Base64 image data URI or raw Base64, as the upstream takes them.
 * The reservation is duration seconds × mode.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { checkForwarded, refuse } from '../kit/fields.js';
import { given, parsedBody, secondsOf } from '../kit/schema.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';
import type { clipModels } from './catalog.js';
import { CLIP_BODIES, CLIP_DEFAULTS, CLIP_PRO_ONLY_MODELS, type ClipAction, type ClipBody } from './schema.js';

export { CLIP_ACTIONS, type ClipAction } from './schema.js';

/** Every field naming a URL, for the URL policy; `metadata` is forwarded as given. */
export const CLIP_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'image' }, { path: 'image_tail' }, { path: 'metadata.**' }];

/** Fields of the recorded request that take raw Base64, stored aside when large (engine/media/inline-inputs.ts). */
export const CLIP_BASE64_FIELDS: readonly string[] = ['image', 'image_tail'];

function plan(body: ClipBody, action: ClipAction): VideoPlan {
  // The schema checked `model` as a clip model wherever `model_name` is absent.
  const model = (body.model_name ?? body.model) as (typeof clipModels)[number];
  const proOnly = CLIP_PRO_ONLY_MODELS.includes(model);
  if (proOnly && body.mode === 'std') refuse('mode', `${model} only offers pro`);
  const mode = body.mode ?? (proOnly ? 'pro' : 'std');
  if (given(body.metadata)) checkForwarded(body.metadata, 'metadata');

  const upstream: Record<string, unknown> = { model_name: model };
  if (given(body.prompt)) upstream.prompt = body.prompt;
  if (given(body.negative_prompt)) upstream.negative_prompt = body.negative_prompt;
  if (given(body.image)) upstream.image = body.image;
  if (given(body.image_tail)) upstream.image_tail = body.image_tail;
  const duration = secondsOf(body.duration) ?? CLIP_DEFAULTS.duration;
  Object.assign(upstream, {
    mode,
    duration,
    aspect_ratio: body.aspect_ratio ?? CLIP_DEFAULTS.aspect_ratio,
    cfg_scale: body.cfg_scale ?? CLIP_DEFAULTS.cfg_scale,
  });
  if (given(body.metadata)) upstream.metadata = body.metadata;
  return { action, model, units: duration, tier: mode, upstream };
}

/** The plan of a body the route's schema parsed. */
export function planClip(body: ClipBody, action: ClipAction): VideoPlanResult {
  return planned(() => plan(body, action));
}

/** The plan of a raw body: the path's schema, then the plan. */
export function planClipRequest(raw: unknown, action: ClipAction): VideoPlanResult {
  return planned(() => plan(parsedBody(CLIP_BODIES[action], raw), action));
}
