/**
 * The tune routes' declared contract (spec 2.6, 4.11): the request bodies, every field in the
 * words the rules used, and the answers. What depends on other fields (custom or description
 * mode, which of prompt, ai_description_prompt, title and tags it needs or refuses, an
 * instrumental track's tags) is decided by the plan (music-request.ts).
 */
import { z } from 'zod';
import { ABSENT_OR_NULL as nothing, bool, callbackUrl, jsonBody, NON_BLANK, number, oneOf, refused, text } from '../kit/schema.js';

export const LYRICS_MODELS = ['classic', 'remi'] as const;
/**
 * The spec shows no maximum. The theme describes the lyrics to write, as music's
 * `ai_description_prompt` describes a song: the same 3,000. (Music's 5,000 is for a lyrics body.)
 */
export const LYRICS_PROMPT_MAX = 3000;

export const TUNE_VERSIONS = ['tune-v5-5', 'tune-v5', 'tune-v4-5+', 'tune-v4-5', 'tune-v4-5-all', 'tune-v4', 'tune-v3-5', 'tune-v3-0'] as const;
export const MUSIC_LYRICS_MAX = 5000;
export const MUSIC_DESCRIPTION_MAX = 3000;
export const MUSIC_TITLE_MAX = 80;
export const MUSIC_TAGS_MAX = 1000;
export const VOCAL_GENDERS = ['Male', 'Female'] as const;
export const AUDIO_FORMATS = ['mp3', 'm4a', 'wav'] as const;

export const LyricsBody = jsonBody({
  prompt: z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'required, the theme of the lyrics' : 'must be a string') })
    .regex(NON_BLANK, 'must not be empty')
    .max(LYRICS_PROMPT_MAX, `must be at most ${LYRICS_PROMPT_MAX} characters`)
    .meta({ description: 'the theme of the lyrics' }),
  lyrics_model: oneOf(LYRICS_MODELS).meta({ description: 'default classic' }),
  hookUrl: callbackUrl(),
});

const EXTEND_HINT = 'not accepted by MUSIC: extending a song uses the EXTEND or UPLOAD_EXTEND action on its own endpoint';

const weight = () => number(0, 1);

/** JSON Schema for a field given (not null), of `type`, with `more` of its facets. */
const givenAs = (type: string, more: Record<string, unknown> = {}) => ({ type, ...more });
const isTrue = givenAs('boolean', { enum: [true] });

/**
 * The modes as the plan decides them (music-request.ts), for the document only: the plan checks
 * them, with its own words. Custom mode with lyrics; custom mode without lyrics, an instrumental
 * track with its style in tags; description mode, a description without lyrics, title or tags.
 */
const MUSIC_MODES = [
  {
    description: 'custom mode: the lyrics in prompt (custom_mode true or not given)',
    required: ['prompt'],
    properties: { prompt: givenAs('string'), custom_mode: { type: 'boolean', nullable: true, enum: [true, null] } },
  },
  {
    description: 'custom mode without lyrics: an instrumental track (instrumental, or make_instrumental when instrumental is not given) in the style of tags',
    required: ['custom_mode', 'tags'],
    properties: { custom_mode: isTrue, tags: givenAs('string'), prompt: nothing },
    anyOf: [
      { required: ['instrumental'], properties: { instrumental: isTrue } },
      { required: ['make_instrumental'], properties: { instrumental: nothing, make_instrumental: isTrue } },
    ],
  },
  {
    description: 'description mode: the song described in ai_description_prompt (custom_mode false or not given; no lyrics, title or tags)',
    required: ['ai_description_prompt'],
    properties: {
      ai_description_prompt: givenAs('string'),
      custom_mode: { type: 'boolean', nullable: true, enum: [false, null] },
      prompt: nothing,
      title: nothing,
      tags: nothing,
    },
  },
];

export const MusicBody = jsonBody({
  task_id: refused(EXTEND_HINT),
  continue_clip_id: refused(EXTEND_HINT),
  continue_at: refused(EXTEND_HINT),
  model: refused('not accepted by MUSIC (billed as tune_music); choose the version with mv'),
  make_instrumental: bool(),
  instrumental: bool().meta({ description: 'wins over make_instrumental' }),
  custom_mode: bool().meta({ description: 'default: true when prompt (lyrics) is given' }),
  prompt: text(MUSIC_LYRICS_MAX).meta({ description: 'the lyrics (custom mode); required there unless the track is instrumental' }),
  ai_description_prompt: text(MUSIC_DESCRIPTION_MAX).meta({ description: 'a description of the song (description mode, required there)' }),
  title: text(MUSIC_TITLE_MAX).meta({ description: 'custom mode only' }),
  tags: text(MUSIC_TAGS_MAX).meta({ description: 'the style (custom mode only; required for an instrumental track without lyrics)' }),
  negative_tags: text(MUSIC_TAGS_MAX),
  mv: oneOf(TUNE_VERSIONS).meta({ description: 'the model version, default tune-v5' }),
  style_weight: weight(),
  weirdness_constraint: weight(),
  audio_weight: weight(),
  vocal_gender: oneOf(VOCAL_GENDERS),
  audio_format: oneOf(AUDIO_FORMATS),
  callback_url: callbackUrl(),
}).meta({ anyOf: MUSIC_MODES });

export type LyricsRequest = z.output<typeof LyricsBody>;
export type MusicRequest = z.output<typeof MusicBody>;

export const SubmitAnswer = z.object({ code: z.literal('success'), message: z.string(), data: z.string().meta({ description: 'the task id' }) });

/** Song details of a music task (one per generated clip). */
const Song = z.object({
  id: z.string(),
  title: z.string(),
  tags: z.string(),
  lyrics: z.string().meta({ description: 'the lyrics sung ("" for an instrumental)' }),
  mv: z.string().meta({ description: 'the model version that made it' }),
  duration: z.number().meta({ description: 'seconds' }),
  audio_url: z.string().meta({ description: 'the audio (an asset reference in the view); "" once the audio expired' }),
});

/** The answer of `GET /tune/fetch/{task_id}`, as the view stores it (view.ts). */
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
