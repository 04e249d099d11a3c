/**
 * `POST /tune/submit/MUSIC` (spec 4.11) over the body the route's schema parsed (schema.ts: every
 * field, the refused extend fields and `model` included). No `model` field: the mode follows
 * from the body, and that is what is decided here.
 *
 * - custom mode (lyrics given): `prompt` is the lyrics; `title` (≤ 80), `tags` apply. Selected
 *   by `prompt`, or explicitly by `custom_mode: true` (then `prompt` is required unless the
 *   track is instrumental, which needs `tags` instead).
 * - description mode: `ai_description_prompt` describes the song; `custom_mode: false` or no
 *   `prompt`. `title` and `tags` belong to custom mode and are refused here.
 * - `instrumental` wins over `make_instrumental`; `mv` one of eight versions (default
 *   `tune-v5`; a channel's model mapping of `tune_music` overrides it upstream).
 * - named by us (docs/decisions/0029-tune-answers-and-request-rules.md): `negative_tags`, `style_weight`, `weirdness_constraint`,
 *   `audio_weight` (0..1), `vocal_gender` (`Male`/`Female`), `audio_format` (`mp3`/`m4a`/`wav`),
 *   `callback_url`.
 */
import { refuse } from '../kit/fields.js';
import { planners } from '../kit/plan.js';
import type { TunePlan } from './plan.js';
import { MusicBody, type MusicRequest } from './schema.js';

export const DEFAULT_TUNE_VERSION = 'tune-v5';
/** Numeric parameters, each a weight from 0 to 1. */
export const MUSIC_WEIGHTS = ['style_weight', 'weirdness_constraint', 'audio_weight'] as const;
/** Passed upstream as given, after the mode's fields. */
const OPTIONS = ['vocal_gender', 'audio_format'] as const;

/** Custom mode or description mode, with the fields each one needs. */
function modeOf(body: MusicRequest, instrumental: boolean): { custom: boolean; lyrics?: string; description?: string } {
  const lyrics = body.prompt ?? undefined;
  const description = body.ai_description_prompt ?? undefined;
  const custom = body.custom_mode ?? lyrics !== undefined;
  if (custom) {
    if (lyrics === undefined && !instrumental)
      refuse('prompt', 'required in custom mode (the lyrics); for a song from a description give ai_description_prompt without custom_mode');
    if (lyrics === undefined && (body.tags ?? undefined) === undefined)
      refuse('tags', 'required for an instrumental track in custom mode without lyrics (the style)');
    return { custom, ...(lyrics !== undefined ? { lyrics } : {}) };
  }
  if (lyrics !== undefined) refuse('prompt', 'lyrics are only used in custom mode; drop custom_mode: false, or describe the song in ai_description_prompt');
  if (description === undefined) refuse('ai_description_prompt', 'required when prompt (lyrics) is absent: describe the song');
  for (const key of ['title', 'tags'] as const) {
    if ((body[key] ?? undefined) !== undefined) refuse(key, 'only used in custom mode (give the lyrics in prompt)');
  }
  return { custom, description };
}

function musicPlan(body: MusicRequest): TunePlan {
  const instrumental = body.instrumental ?? body.make_instrumental ?? false;
  const mode = modeOf(body, instrumental);

  const upstream: Record<string, unknown> = { custom_mode: mode.custom };
  if (mode.lyrics !== undefined) upstream.prompt = mode.lyrics;
  if (mode.description !== undefined) upstream.ai_description_prompt = mode.description;
  for (const key of ['title', 'tags', 'negative_tags'] as const) {
    const value = body[key] ?? undefined;
    if (value !== undefined) upstream[key] = value;
  }
  upstream.instrumental = instrumental;
  upstream.mv = body.mv ?? DEFAULT_TUNE_VERSION;
  for (const key of [...MUSIC_WEIGHTS, ...OPTIONS]) {
    const value = body[key] ?? undefined;
    if (value !== undefined) upstream[key] = value;
  }
  const callbackUrl = body.callback_url ?? undefined;
  return { action: 'MUSIC', model: 'tune_music', units: 1, upstream, ...(callbackUrl !== undefined ? { callbackUrl } : {}) };
}

export const { parsed: planMusic, raw: planMusicRequest } = planners(MusicBody, musicPlan);
