/**
 * `POST /tune/submit/LYRICS` (spec 4.11) over the body the route's schema parsed (schema.ts):
 * `prompt` (the theme, required), `lyrics_model` (`classic` or `remi`, default `classic`) and
 * `hookUrl` (completion callback). Other fields are ignored; the callback stays with the
 * gateway (it is not forwarded upstream).
 */
import { planned } from '../kit/plan.js';
import { parsedBody } from '../kit/schema.js';
import type { TunePlan, TunePlanResult } from './plan.js';
import { LyricsBody, type LyricsRequest } from './schema.js';

function lyricsPlan(body: LyricsRequest): TunePlan {
  const hookUrl = body.hookUrl ?? undefined;
  return {
    action: 'LYRICS',
    model: 'tune_lyrics',
    units: 1,
    upstream: { prompt: body.prompt, lyrics_model: body.lyrics_model ?? 'classic' },
    ...(hookUrl !== undefined ? { callbackUrl: hookUrl } : {}),
  };
}

/** The plan of a body the route's schema parsed (the route's handler holds it). */
export const planLyrics = (body: LyricsRequest): TunePlanResult => planned(() => lyricsPlan(body));

/** The plan of a raw body: the schema's first refusal, or the plan. */
export function planLyricsRequest(body: unknown): TunePlanResult {
  return planned(() => lyricsPlan(parsedBody(LyricsBody, body)));
}
