/**
 * The plan of the two motion submit paths (spec 4.15) over a body their schema parsed
 * (schema.ts). The gateway takes flat fields and builds the upstream's native request
 * `{model, input, parameters}`: `metadata.input` and `metadata.parameters` are the base, the flat
 * fields override them. What the reservation depends on is checked wherever it is given (a
 * fallback with the flat field's own schema): duration (`duration`, else `seconds`, else
 * `metadata.parameters.duration`; default 5) and resolution (`resolution` / `size`, pixel sizes
 * mapped to their tier; default: reserve on 1080P and let the upstream choose).
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { type Body, checkForwarded, refuse } from '../kit/fields.js';
import { given, optionalString, parsedBody, parsedField, secondsOf } from '../kit/schema.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';
import { type ImageInputs, imageInputsOf } from './media.js';
import {
  MOTION_BODIES,
  MOTION_DEFAULT_SECONDS,
  MotionResolution,
  MotionSeconds,
  MotionSize,
  type MotionImageRequest,
  type MotionPath,
  type MotionTextRequest,
} from './schema.js';
import { type MotionTier, parseMotionSize, tierName, tierOfPixels } from './sizes.js';

export type { MotionPath } from './schema.js';
export type MotionAction = 'text2video' | 'image2video' | 'keyframes2video' | 'reference2video';

/** Reserved when no resolution is given: the highest tier; settlement follows the delivery. */
export const MOTION_RESERVATION_TIER: MotionTier = '1080P';

/** Every field naming a URL, for the URL policy; `metadata.input` / `parameters` are forwarded as given. */
export const MOTION_URL_FIELDS: readonly UrlFieldSpec[] = [
  ...['image', 'img_url', 'image_url', 'first_frame_url', 'last_frame_url', 'audio_url', 'images.*', 'media.*.url'].map((path) => ({ path })),
  { path: 'metadata.input.**' },
  { path: 'metadata.parameters.**' },
];

type MotionRequest = ({ path: 'text' } & MotionTextRequest) | ({ path: 'image' } & MotionImageRequest);
type Resolution = { tier: MotionTier; upstream: { size: string } | { resolution: MotionTier } };

/** The flat field, else the base's (checked as the flat one is), with the name it was given under. */
function fallback(flat: unknown, base: Body, key: string): { value: unknown; param: string } {
  return given(flat) ? { value: flat, param: key } : { value: base[key], param: `metadata.parameters.${key}` };
}

/** A tier from a checked `size` or `resolution`, and how the upstream gets it (pixel size or tier). */
function resolutionOf(text: string | null | undefined): Resolution | undefined {
  if (!given(text)) return undefined;
  const tier = tierName(text);
  if (tier) return { tier, upstream: { resolution: tier } };
  const pixels = parseMotionSize(text)!;
  return { tier: tierOfPixels(pixels.width, pixels.height)!, upstream: { size: `${pixels.width}*${pixels.height}` } };
}

function resolution(body: MotionRequest, parameters: Body): Resolution | undefined {
  const sizeGiven = fallback(body.size, parameters, 'size');
  const size = resolutionOf(parsedField(MotionSize, sizeGiven.value, sizeGiven.param));
  const resolutionGiven = fallback(body.resolution, parameters, 'resolution');
  const resolution = resolutionOf(parsedField(MotionResolution, resolutionGiven.value, resolutionGiven.param));
  if (size && resolution && size.tier !== resolution.tier) refuse('resolution', `${resolution.tier} conflicts with size (${size.tier}); give one of them`);
  return resolution ?? size;
}

function duration(body: MotionRequest, parameters: Body): number {
  // The schema checked `seconds` wherever `duration` is absent.
  const flat = secondsOf(body.duration ?? (body.seconds as number | string | null | undefined));
  if (flat !== undefined) return flat;
  return secondsOf(parsedField(MotionSeconds, parameters.duration, 'metadata.parameters.duration')) ?? MOTION_DEFAULT_SECONDS;
}

function parametersOf(body: MotionRequest, parameters: Body): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (given(body.ratio)) out.ratio = body.ratio;
  for (const flag of ['prompt_extend', 'watermark', 'audio'] as const) {
    const value = body[flag];
    if (given(value)) out[flag] = value;
  }
  if (given(body.seed)) out.seed = body.seed;
  // The base keeps whatever else the caller put in metadata.parameters; the checked values win.
  const { size: _size, resolution: _resolution, duration: _duration, ...base } = parameters;
  return { ...base, ...out };
}

function actionOf(inputs: ImageInputs | undefined): MotionAction {
  if (!inputs) return 'text2video';
  if (inputs.media.some((m) => m.type === 'video')) return 'reference2video';
  return inputs.last !== undefined ? 'keyframes2video' : 'image2video';
}

function buildInput(base: Body, prompt: string | undefined, negativePrompt: string | undefined, inputs: ImageInputs | undefined): Record<string, unknown> {
  const input: Record<string, unknown> = { ...base };
  if (prompt !== undefined) input.prompt = prompt;
  if (negativePrompt !== undefined) input.negative_prompt = negativePrompt;
  if (inputs?.first !== undefined && inputs.last === undefined) input.img_url = inputs.first;
  if (inputs?.first !== undefined && inputs.last !== undefined) Object.assign(input, { first_frame_url: inputs.first, last_frame_url: inputs.last });
  if (inputs && inputs.media.length > 0) input.media = inputs.media;
  if (inputs?.audioUrl !== undefined) input.audio_url = inputs.audioUrl;
  return input;
}

function plan(body: MotionRequest): VideoPlan {
  const metadata = body.metadata ?? {};
  checkForwarded(metadata, 'metadata');
  const baseInput = metadata.input ?? {};
  const baseParameters = metadata.parameters ?? {};
  const prompt = given(body.prompt) ? body.prompt : (parsedField(optionalString(), baseInput.prompt, 'metadata.input.prompt') ?? undefined);
  if (body.path === 'text' && (prompt === undefined || prompt.trim() === '')) refuse('prompt', 'required for text-to-video, a non-empty string');
  const inputs = body.path === 'image' ? imageInputsOf(body) : undefined;
  const seconds = duration(body, baseParameters);
  const tier = resolution(body, baseParameters);
  const parameters = { ...parametersOf(body, baseParameters), ...(tier?.upstream ?? {}), duration: seconds };
  const upstream = { model: body.model, input: buildInput(baseInput, prompt, body.negative_prompt ?? undefined, inputs), parameters };
  return { action: actionOf(inputs), model: body.model, units: seconds, tier: tier?.tier ?? MOTION_RESERVATION_TIER, upstream };
}

/** The plan of a body the path's schema parsed. */
export function planMotion(body: MotionTextRequest | MotionImageRequest, path: MotionPath): VideoPlanResult {
  return planned(() => plan({ ...body, path } as MotionRequest));
}

/** The plan of a raw body: the path's schema, then the plan. */
export function planMotionRequest(raw: unknown, path: MotionPath): VideoPlanResult {
  return planned(() => plan({ ...parsedBody(MOTION_BODIES[path], raw), path } as MotionRequest));
}
