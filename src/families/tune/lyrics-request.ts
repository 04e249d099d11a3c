/**
 * `POST /tune/submit/LYRICS` (spec 4.11) over the body the route's schema parsed (schema.ts):
 * `prompt` (the theme, required), `lyrics_model` (`classic` or `remi`, default `classic`) and
 * `hookUrl` (completion callback). Other fields are ignored; the callback stays with the
 * gateway (it is not forwarded upstream).
 */
import { planners } from '../kit/plan.js';
import type { TunePlan } from './plan.js';
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

export const { parsed: planLyrics, raw: planLyricsRequest } = planners(LyricsBody, lyricsPlan);
