/**
 * `POST /tune/submit/MUSIC` (spec 4.11). No `model` field: the mode follows from the body.
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
 * - `task_id`, `continue_clip_id`, `continue_at` (extending) are refused.
 */
import { type Body, has, isPlainObject, readBool, readCallbackUrl, readEnum, readNumber, readText, refuse } from '../kit/fields.js';
import { planned } from '../kit/plan.js';
import type { TunePlan, TunePlanResult } from './plan.js';

export const TUNE_VERSIONS = ['tune-v5-5', 'tune-v5', 'tune-v4-5+', 'tune-v4-5', 'tune-v4-5-all', 'tune-v4', 'tune-v3-5', 'tune-v3-0'] as const;
export const DEFAULT_TUNE_VERSION = 'tune-v5';
export const MUSIC_LYRICS_MAX = 5000;
export const MUSIC_DESCRIPTION_MAX = 3000;
export const MUSIC_TITLE_MAX = 80;
export const MUSIC_TAGS_MAX = 1000;
export const VOCAL_GENDERS = ['Male', 'Female'] as const;
export const AUDIO_FORMATS = ['mp3', 'm4a', 'wav'] as const;
/** Numeric parameters, each a weight from 0 to 1. */
export const MUSIC_WEIGHTS = ['style_weight', 'weirdness_constraint', 'audio_weight'] as const;

const EXTEND_FIELDS = ['task_id', 'continue_clip_id', 'continue_at'] as const;
const EXTEND_HINT = 'not accepted by MUSIC: extending a song uses the EXTEND or UPLOAD_EXTEND action on its own endpoint';

function refuseForeignFields(body: Body): void {
  for (const key of EXTEND_FIELDS) if (has(body, key)) refuse(key, EXTEND_HINT);
  if (has(body, 'model')) refuse('model', 'not accepted by MUSIC (billed as tune_music); choose the version with mv');
}

/** Custom mode or description mode, with the fields each one needs. */
function readMode(body: Body, instrumental: boolean): { custom: boolean; lyrics?: string; description?: string } {
  const customFlag = readBool(body, 'custom_mode');
  const lyrics = readText(body, 'prompt', MUSIC_LYRICS_MAX);
  const description = readText(body, 'ai_description_prompt', MUSIC_DESCRIPTION_MAX);
  const custom = customFlag ?? lyrics !== undefined;
  if (custom) {
    if (lyrics === undefined && !instrumental)
      refuse('prompt', 'required in custom mode (the lyrics); for a song from a description give ai_description_prompt without custom_mode');
    return { custom, ...(lyrics !== undefined ? { lyrics } : {}) };
  }
  if (lyrics !== undefined) refuse('prompt', 'lyrics are only used in custom mode; drop custom_mode: false, or describe the song in ai_description_prompt');
  if (description === undefined) refuse('ai_description_prompt', 'required when prompt (lyrics) is absent: describe the song');
  for (const key of ['title', 'tags'] as const) {
    if (has(body, key)) refuse(key, 'only used in custom mode (give the lyrics in prompt)');
  }
  return { custom, description };
}

function musicPlan(body: unknown): TunePlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  refuseForeignFields(body);
  const makeInstrumental = readBool(body, 'make_instrumental');
  const instrumental = readBool(body, 'instrumental') ?? makeInstrumental ?? false;
  const mode = readMode(body, instrumental);
  const title = readText(body, 'title', MUSIC_TITLE_MAX);
  const tags = readText(body, 'tags', MUSIC_TAGS_MAX);
  if (mode.custom && mode.lyrics === undefined && tags === undefined)
    refuse('tags', 'required for an instrumental track in custom mode without lyrics (the style)');
  const negativeTags = readText(body, 'negative_tags', MUSIC_TAGS_MAX);
  const mv = readEnum(body, 'mv', TUNE_VERSIONS) ?? DEFAULT_TUNE_VERSION;
  const weights = MUSIC_WEIGHTS.flatMap((key) => {
    const value = readNumber(body, key, 0, 1);
    return value === undefined ? [] : [[key, value] as const];
  });
  const vocalGender = readEnum(body, 'vocal_gender', VOCAL_GENDERS);
  const audioFormat = readEnum(body, 'audio_format', AUDIO_FORMATS);
  const callbackUrl = readCallbackUrl(body, 'callback_url');

  const upstream: Record<string, unknown> = { custom_mode: mode.custom };
  if (mode.lyrics !== undefined) upstream.prompt = mode.lyrics;
  if (mode.description !== undefined) upstream.ai_description_prompt = mode.description;
  if (title !== undefined) upstream.title = title;
  if (tags !== undefined) upstream.tags = tags;
  if (negativeTags !== undefined) upstream.negative_tags = negativeTags;
  upstream.instrumental = instrumental;
  upstream.mv = mv;
  for (const [key, value] of weights) upstream[key] = value;
  if (vocalGender !== undefined) upstream.vocal_gender = vocalGender;
  if (audioFormat !== undefined) upstream.audio_format = audioFormat;
  return { action: 'MUSIC', model: 'tune_music', units: 1, upstream, ...(callbackUrl !== undefined ? { callbackUrl } : {}) };
}

export function planMusicRequest(body: unknown): TunePlanResult {
  return planned(() => musicPlan(body));
}
