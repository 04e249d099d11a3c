/**
 * The tune routes' declared contract (spec 2.6, 4.11): request bodies as the rules read them
 * (lyrics-request.ts, music-request.ts: same fields, same words) and the answers. What depends on
 * other fields (custom mode, instrumental tracks, fields of other actions) stays with the rules.
 */
import { z } from 'zod';
import { bool, callbackUrl, jsonBody, number, oneOf, text } from '../kit/schema.js';
import { LYRICS_MODELS, LYRICS_PROMPT_MAX } from './lyrics-request.js';
import { AUDIO_FORMATS, MUSIC_DESCRIPTION_MAX, MUSIC_LYRICS_MAX, MUSIC_TAGS_MAX, MUSIC_TITLE_MAX, TUNE_VERSIONS, VOCAL_GENDERS } from './music-request.js';

export const LyricsBody = jsonBody({
  prompt: z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'required, the theme of the lyrics' : 'must be a string') })
    .refine((value) => value.trim() !== '', 'must not be empty')
    .max(LYRICS_PROMPT_MAX, `must be at most ${LYRICS_PROMPT_MAX} characters`)
    .meta({ description: 'the theme of the lyrics' }),
  lyrics_model: oneOf(LYRICS_MODELS).meta({ description: 'default classic' }),
  hookUrl: callbackUrl(),
});

const weight = () => number(0, 1);

export const MusicBody = jsonBody({
  make_instrumental: bool(),
  instrumental: bool(),
  custom_mode: bool().meta({ description: 'default: true when prompt (lyrics) is given' }),
  prompt: text(MUSIC_LYRICS_MAX).meta({ description: 'the lyrics (custom mode)' }),
  ai_description_prompt: text(MUSIC_DESCRIPTION_MAX).meta({ description: 'a description of the song (description mode)' }),
  title: text(MUSIC_TITLE_MAX),
  tags: text(MUSIC_TAGS_MAX).meta({ description: 'the style' }),
  negative_tags: text(MUSIC_TAGS_MAX),
  mv: oneOf(TUNE_VERSIONS).meta({ description: 'the model version, default tune-v5' }),
  style_weight: weight(),
  weirdness_constraint: weight(),
  audio_weight: weight(),
  vocal_gender: oneOf(VOCAL_GENDERS),
  audio_format: oneOf(AUDIO_FORMATS),
  callback_url: callbackUrl(),
});

export const SubmitAnswer = z.object({ code: z.literal('success'), message: z.string(), data: z.string().meta({ description: 'the task id' }) });

const Song = z.object({ id: z.string(), title: z.string(), tags: z.string(), lyrics: z.string(), mv: z.string(), duration: z.number(), audio_url: z.string() });

export const TaskAnswer = z.object({
  code: z.literal('success'),
  message: z.string(),
  data: z.object({
    task_id: z.string(),
    action: z.string(),
    status: z.enum(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE']),
    progress: z.string(),
    submit_time: z.number(),
    start_time: z.number(),
    finish_time: z.number(),
    fail_reason: z.string(),
    result_url: z.string(),
    data: z.union([z.array(Song), z.string(), z.null()]).meta({ description: 'MUSIC: the songs; LYRICS: the lyrics; null until SUCCESS' }),
  }),
});
