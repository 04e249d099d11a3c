/**
 * Request rules of `POST /v1/video/generations` (spec 4.3, limits 8). The reservation is quoted
 * on seconds × resolution tier: the requested `metadata.resolution`, else the model's highest
 * tier up to 1080p; the seconds asked for (or the upstream's default of 5), or more when
 * `metadata.frames` asks for a longer video. The 1.5 model's audio (on unless
 * `generate_audio: false`) is the `audio` extra. `metadata` is passed to the upstream, so keys
 * other than the spec's are refused: an unknown key could change what is rendered and billed
 * without the quote knowing (docs/decisions/0033-vidgen.md). `callback_url` stays with the gateway.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import {
  type Body,
  checkLength,
  field,
  isOneOf,
  MAX_PROMPT_CHARS,
  readBody,
  readBool,
  readCallbackUrl,
  readInt,
  readObject,
  readWholeSeconds,
  refuse,
} from '../kit/fields.js';
import { type VideoPlan, type VideoPlanResult } from '../kit/video.js';
import { planned } from '../kit/plan.js';
import { readContent } from './content.js';
import { isVidgenModel, reservationTier, VIDGEN_MODELS, type VidgenCapabilities, type VidgenTier } from './models.js';

export const VIDGEN_MAX_SECONDS = 3600;
/** What the upstream renders when `seconds` is omitted (or 0, "let the model decide"). */
export const VIDGEN_DEFAULT_SECONDS = 5;
/** The native models render 24 frames per second; `frames` is 24 × seconds + 1. */
const FRAMES_PER_SECOND = 24;
/** 3600 s at 24 frames per second, plus the first frame. */
export const VIDGEN_MAX_FRAMES = 86_401;
export const SEED_MAX = 4_294_967_295;
export const SERVICE_TIERS = ['default', 'flex'] as const;
export const RATIO = /^(\d{1,2}:\d{1,2}|adaptive|keep_ratio)$/;
export const RATIO_RULE = 'must be an aspect ratio such as 16:9, 9:16, 1:1, or adaptive';

export const METADATA_KEYS = [
  'resolution',
  'ratio',
  'frames',
  'seed',
  'generate_audio',
  'watermark',
  'camera_fixed',
  'draft',
  'callback_url',
  'service_tier',
  'content',
] as const;
const FLAGS = ['generate_audio', 'watermark', 'camera_fixed', 'draft'] as const;

/** Every field naming a URL, for the URL policy (src/families/url-policy.ts). */
export const VIDGEN_URL_FIELDS: readonly UrlFieldSpec[] = [
  { path: 'metadata.content.*.image_url.url' },
  { path: 'metadata.content.*.video_url.url' },
  { path: 'metadata.content.*.audio_url.url' },
  { path: 'metadata.callback_url', use: 'callback' },
];

function readModel(body: Body): keyof typeof VIDGEN_MODELS {
  const model = field(body, 'model');
  if (model === undefined) refuse('model', 'required, one of the vidgen models');
  if (!isVidgenModel(model)) refuse('model', `must be one of ${Object.keys(VIDGEN_MODELS).join(', ')}`);
  return model;
}

function readPrompt(body: Body): string {
  const prompt = field(body, 'prompt');
  if (typeof prompt !== 'string' || prompt.trim() === '') refuse('prompt', 'required, a non-empty string');
  checkLength(prompt, 'prompt', MAX_PROMPT_CHARS);
  return prompt;
}

function readResolution(metadata: Body, model: string, caps: VidgenCapabilities): VidgenTier | undefined {
  const value = field(metadata, 'resolution');
  if (value === undefined) return undefined;
  const tier = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (!isOneOf(caps.tiers, tier)) refuse('metadata.resolution', `${model} offers ${caps.tiers.join(', ')}; ${JSON.stringify(value)} is not available`);
  return tier;
}

/** The metadata sent upstream: known keys only, checked; resolution normalised; no callback. */
function readMetadata(metadata: Body, model: string, caps: VidgenCapabilities): Record<string, unknown> {
  for (const key of Object.keys(metadata)) {
    if (!isOneOf(METADATA_KEYS, key)) refuse(`metadata.${key}`, `unknown key; metadata takes ${METADATA_KEYS.join(', ')}`);
  }
  const out: Record<string, unknown> = {};
  const resolution = readResolution(metadata, model, caps);
  if (resolution !== undefined) out.resolution = resolution;
  const ratio = field(metadata, 'ratio');
  if (ratio !== undefined) {
    if (typeof ratio !== 'string' || !RATIO.test(ratio)) refuse('metadata.ratio', RATIO_RULE);
    out.ratio = ratio;
  }
  const frames = readInt(metadata, 'frames', 1, VIDGEN_MAX_FRAMES, 'metadata.frames');
  if (frames !== undefined) out.frames = frames;
  const seed = readInt(metadata, 'seed', -1, SEED_MAX, 'metadata.seed');
  if (seed !== undefined) out.seed = seed;
  for (const flag of FLAGS) {
    const value = readBool(metadata, flag, `metadata.${flag}`);
    if (value !== undefined) out[flag] = value;
  }
  const tier = field(metadata, 'service_tier');
  if (tier !== undefined) {
    if (!isOneOf(SERVICE_TIERS, tier)) refuse('metadata.service_tier', `must be one of ${SERVICE_TIERS.join(', ')}`);
    out.service_tier = tier;
  }
  return out;
}

/**
 * Seconds the reservation is quoted on: those asked for (0 or absent: the upstream's default),
 * or the length `frames` asks for when longer, since settlement never charges more seconds than
 * were reserved and `frames` alone decides the length on the native models.
 */
function reservedSeconds(seconds: number | undefined, frames: unknown): number {
  const asked = seconds !== undefined && seconds > 0 ? seconds : VIDGEN_DEFAULT_SECONDS;
  const ofFrames = typeof frames === 'number' ? Math.ceil((frames - 1) / FRAMES_PER_SECOND) : 0;
  return Math.max(asked, ofFrames);
}

function plan(raw: unknown): VideoPlan {
  const body = readBody(raw);
  const model = readModel(body);
  const caps = VIDGEN_MODELS[model];
  const prompt = readPrompt(body);
  const seconds = readWholeSeconds(field(body, 'seconds'), 'seconds', 0, VIDGEN_MAX_SECONDS);
  const metadata = readObject(body, 'metadata') ?? {};
  const forwarded = readMetadata(metadata, model, caps);
  const { items, action } = readContent(field(metadata, 'content'), model, caps);
  const callbackUrl = metadata ? readCallbackUrl(metadata, 'callback_url', 'metadata.callback_url') : undefined;

  if (items.length > 0) forwarded.content = items;
  const audio = caps.pricedAudio && forwarded.generate_audio !== false;
  if (caps.pricedAudio) forwarded.generate_audio = audio;

  const upstream: Record<string, unknown> = { model, prompt };
  if (seconds !== undefined && seconds > 0) upstream.seconds = seconds;
  if (Object.keys(forwarded).length > 0) upstream.metadata = forwarded;
  return {
    action,
    model,
    units: reservedSeconds(seconds, forwarded.frames),
    tier: typeof forwarded.resolution === 'string' ? forwarded.resolution : reservationTier(caps),
    ...(audio ? { extras: ['audio'] } : {}),
    upstream,
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
  };
}

export function planVidgenRequest(body: unknown): VideoPlanResult {
  return planned(() => plan(body));
}
