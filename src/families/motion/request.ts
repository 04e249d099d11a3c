/**
 * Request rules of the two motion submit paths (spec 4.15). The gateway takes flat fields and
 * builds the upstream's native request `{model, input, parameters}`: `metadata.input` and
 * `metadata.parameters` are the base, the flat fields override them. What the reservation
 * depends on is checked wherever it is given: duration (`duration`, else `seconds`, else
 * `metadata.parameters.duration`; default 5) and resolution (`resolution` / `size`, pixel sizes
 * mapped to their tier; default: reserve on 1080P and let the upstream choose).
 */
import { motionImageModels, motionTextModels } from './catalog.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import {
  type Body,
  checkForwarded,
  field,
  isOneOf,
  readBody,
  readBool,
  readInt,
  readObject,
  readOptionalString,
  readWholeSeconds,
  refuse,
} from '../kit/fields.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';
import { type ImageInputs, readImageInputs } from './media.js';
import { type MotionTier, parseMotionSize, tierName, tierOfPixels } from './sizes.js';

export type MotionPath = 'text' | 'image';
export type MotionAction = 'text2video' | 'image2video' | 'keyframes2video' | 'reference2video';

export const MOTION_DEFAULT_SECONDS = 5;
export const MOTION_MAX_SECONDS = 3600;
/** Reserved when no resolution is given: the highest tier; settlement follows the delivery. */
export const MOTION_RESERVATION_TIER: MotionTier = '1080P';
export const SEED_MAX = 2_147_483_647;
export const RATIO = /^\d{1,2}:\d{1,2}$/;
export const RATIO_RULE = 'must be an aspect ratio such as 16:9, 9:16 or 1:1';
export const SIZE_RULE = 'must be a size such as 1280*720 or a resolution 480P, 720P, 1080P';
export const RESOLUTION_RULE = 'must be 480P, 720P or 1080P';
export const TOO_LARGE_RULE = 'is larger than 1080P (1920*1080)';
const IMAGE_FIELDS = ['image', 'images', 'img_url', 'image_url', 'first_frame_url', 'last_frame_url', 'media', 'audio_url'] as const;

/** Every field naming a URL, for the URL policy; `metadata.input` / `parameters` are forwarded as given. */
export const MOTION_URL_FIELDS: readonly UrlFieldSpec[] = [
  ...['image', 'img_url', 'image_url', 'first_frame_url', 'last_frame_url', 'audio_url', 'images.*', 'media.*.url'].map((path) => ({ path })),
  { path: 'metadata.input.**' },
  { path: 'metadata.parameters.**' },
];

function readModel(body: Body, path: MotionPath): string {
  const models: readonly string[] = path === 'text' ? motionTextModels : motionImageModels;
  const model = field(body, 'model');
  if (model === undefined) refuse('model', 'required');
  if (!isOneOf(models, model)) {
    refuse('model', `${JSON.stringify(model)} is not a ${path === 'text' ? 'text-to-video' : 'image-to-video'} model here; use one of ${models.join(', ')}`);
  }
  return model;
}

/** A tier from `size` or `resolution` text, and how the upstream gets it (pixel size or tier). */
function readSizeField(value: unknown, param: string): { tier: MotionTier; upstream: { size: string } | { resolution: MotionTier } } | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value : '';
  const tier = tierName(text);
  if (tier) return { tier, upstream: { resolution: tier } };
  const pixels = param.endsWith('size') ? parseMotionSize(text) : undefined;
  const pixelTier = pixels ? tierOfPixels(pixels.width, pixels.height) : undefined;
  if (pixels && pixelTier) return { tier: pixelTier, upstream: { size: `${pixels.width}*${pixels.height}` } };
  if (pixels) refuse(param, TOO_LARGE_RULE);
  return refuse(param, param.endsWith('size') ? SIZE_RULE : RESOLUTION_RULE);
}

function readResolution(body: Body, parameters: Body) {
  const size = readSizeField(field(body, 'size') ?? field(parameters, 'size'), field(body, 'size') !== undefined ? 'size' : 'metadata.parameters.size');
  const resolution = readSizeField(
    field(body, 'resolution') ?? field(parameters, 'resolution'),
    field(body, 'resolution') !== undefined ? 'resolution' : 'metadata.parameters.resolution',
  );
  if (size && resolution && size.tier !== resolution.tier) refuse('resolution', `${resolution.tier} conflicts with size (${size.tier}); give one of them`);
  return resolution ?? size;
}

function readDuration(body: Body, parameters: Body): number {
  for (const [param, value] of [
    ['duration', field(body, 'duration')],
    ['seconds', field(body, 'seconds')],
    ['metadata.parameters.duration', field(parameters, 'duration')],
  ] as const) {
    if (value !== undefined) return readWholeSeconds(value, param, 1, MOTION_MAX_SECONDS) ?? MOTION_DEFAULT_SECONDS;
  }
  return MOTION_DEFAULT_SECONDS;
}

function readParameters(body: Body, parameters: Body): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const ratio = field(body, 'ratio');
  if (ratio !== undefined) {
    if (typeof ratio !== 'string' || !RATIO.test(ratio)) refuse('ratio', RATIO_RULE);
    out.ratio = ratio;
  }
  for (const flag of ['prompt_extend', 'watermark', 'audio'] as const) {
    const value = readBool(body, flag);
    if (value !== undefined) out[flag] = value;
  }
  const seed = readInt(body, 'seed', 0, SEED_MAX);
  if (seed !== undefined) out.seed = seed;
  // The base keeps whatever else the caller put in metadata.parameters; the checked values win.
  const { size: _size, resolution: _resolution, duration: _duration, ...base } = parameters;
  return { ...base, ...out };
}

function actionOf(path: MotionPath, inputs: ImageInputs | undefined): MotionAction {
  if (path === 'text' || !inputs) return 'text2video';
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

function plan(raw: unknown, path: MotionPath): VideoPlan {
  const body = readBody(raw);
  const model = readModel(body, path);
  const metadata = readObject(body, 'metadata') ?? {};
  checkForwarded(metadata, 'metadata');
  const baseInput = readObject(metadata, 'input', 'metadata.input') ?? {};
  const baseParameters = readObject(metadata, 'parameters', 'metadata.parameters') ?? {};
  const prompt = readOptionalString(body, 'prompt') ?? readOptionalString(baseInput, 'prompt', 'metadata.input.prompt');
  if (path === 'text' && (prompt === undefined || prompt.trim() === '')) refuse('prompt', 'required for text-to-video, a non-empty string');
  const negativePrompt = readOptionalString(body, 'negative_prompt');
  // The text-to-video models take no image input: dropping one unseen would render and charge a video other than the one asked for.
  if (path === 'text') {
    const imageField = IMAGE_FIELDS.find((key) => field(body, key) !== undefined);
    if (imageField) refuse(imageField, 'image and media inputs go to the image2video path');
  }
  const inputs = path === 'image' ? readImageInputs(body) : undefined;
  const duration = readDuration(body, baseParameters);
  const resolution = readResolution(body, baseParameters);
  const parameters = { ...readParameters(body, baseParameters), ...(resolution?.upstream ?? {}), duration };
  const upstream = { model, input: buildInput(baseInput, prompt, negativePrompt, inputs), parameters };
  return { action: actionOf(path, inputs), model, units: duration, tier: resolution?.tier ?? MOTION_RESERVATION_TIER, upstream };
}

export function planMotionRequest(body: unknown, path: MotionPath): VideoPlanResult {
  return planned(() => plan(body, path));
}
