/**
 * The plan of `POST /v1/video/generations` (spec 4.3, limits 8) over a body its schema parsed
 * (schema.ts). The reservation is quoted on seconds × resolution tier: the requested
 * `metadata.resolution`, else the model's highest tier up to 1080p; the seconds asked for (or the
 * upstream's default of 5), or more when `metadata.frames` asks for a longer video. The 1.5
 * model's audio (on unless `generate_audio: false`) is the `audio` extra. `metadata` is passed to
 * the upstream (the schema refuses keys other than the spec's: an unknown key could change what
 * is rendered and billed without the quote knowing, docs/decisions/0033-vidgen.md); `callback_url` stays
 * with the gateway.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { given, secondsOf } from '../kit/schema.js';
import { type VideoPlan } from '../kit/video.js';
import { planners } from '../kit/plan.js';
import { contentPlan } from './content.js';
import { reservationTier, VIDGEN_MODELS } from './models.js';
import { VidgenBody, type VidgenRequest } from './schema.js';

/** What the upstream renders when `seconds` is omitted (or 0, "let the model decide"). */
export const VIDGEN_DEFAULT_SECONDS = 5;
/** The native models render 24 frames per second; `frames` is 24 × seconds + 1. */
const FRAMES_PER_SECOND = 24;
const FLAGS = ['generate_audio', 'watermark', 'camera_fixed', 'draft'] as const;

/** Every field naming a URL, for the URL policy (src/families/kit/url-policy.ts). */
export const VIDGEN_URL_FIELDS: readonly UrlFieldSpec[] = [
  { path: 'metadata.content.*.image_url.url' },
  { path: 'metadata.content.*.video_url.url' },
  { path: 'metadata.content.*.audio_url.url' },
  { path: 'metadata.callback_url', use: 'callback' },
];

/** The metadata sent upstream: the spec's keys as given, resolution normalised; no callback. */
function forwardedOf(metadata: NonNullable<VidgenRequest['metadata']>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (given(metadata.resolution)) out.resolution = metadata.resolution.trim().toLowerCase();
  if (given(metadata.ratio)) out.ratio = metadata.ratio;
  if (given(metadata.frames)) out.frames = metadata.frames;
  if (given(metadata.seed)) out.seed = metadata.seed;
  for (const flag of FLAGS) {
    const value = metadata[flag];
    if (given(value)) out[flag] = value;
  }
  if (given(metadata.service_tier)) out.service_tier = metadata.service_tier;
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

function plan(body: VidgenRequest): VideoPlan {
  const { model, prompt } = body;
  const caps = VIDGEN_MODELS[model];
  const seconds = secondsOf(body.seconds);
  const metadata = body.metadata ?? {};
  const forwarded = forwardedOf(metadata);
  const { items, action } = contentPlan(metadata.content, model, caps);
  const callbackUrl = metadata.callback_url ?? undefined;

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

export const { parsed: planVidgen, raw: planVidgenRequest } = planners(VidgenBody, plan);
