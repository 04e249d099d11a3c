/**
 * `POST /tune/submit/LYRICS` (spec 4.11): `prompt` (the theme, required), `lyrics_model`
 * (`classic` or `remi`, default `classic`) and `hookUrl` (completion callback). Other fields
 * are ignored; the callback stays with the gateway (it is not forwarded upstream).
 */
import { isPlainObject, readCallbackUrl, readEnum, readText, refuse } from '../kit/fields.js';
import { planned } from '../kit/plan.js';
import type { TunePlan, TunePlanResult } from './plan.js';

export const LYRICS_MODELS = ['classic', 'remi'] as const;
/**
 * The spec shows no maximum. The theme describes the lyrics to write, as music's
 * `ai_description_prompt` describes a song: the same 3,000. (Music's 5,000 is for a lyrics body.)
 */
export const LYRICS_PROMPT_MAX = 3000;

function lyricsPlan(body: unknown): TunePlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const prompt = readText(body, 'prompt', LYRICS_PROMPT_MAX);
  if (prompt === undefined) refuse('prompt', 'required, the theme of the lyrics');
  const lyricsModel = readEnum(body, 'lyrics_model', LYRICS_MODELS) ?? 'classic';
  const hookUrl = readCallbackUrl(body, 'hookUrl');
  return {
    action: 'LYRICS',
    model: 'tune_lyrics',
    units: 1,
    upstream: { prompt, lyrics_model: lyricsModel },
    ...(hookUrl !== undefined ? { callbackUrl: hookUrl } : {}),
  };
}

export function planLyricsRequest(body: unknown): TunePlanResult {
  return planned(() => lyricsPlan(body));
}
