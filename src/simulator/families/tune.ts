/**
 * `tune` upstream (spec 2.6, 4.11), the same interface the gateway offers:
 *   POST {prefix}/tune/submit/LYRICS   `{prompt, lyrics_model}` → `{code: "success", message, data: <id>}`
 *   POST {prefix}/tune/submit/MUSIC    custom (`prompt` = lyrics) or description mode
 *   GET  {prefix}/tune/fetch/<id>      `{code, message, data: record}` recomputed from the id and clock
 * Lyrics are text made up from the theme; a song task returns two clips, each a real WAV file
 * at `{prefix}/files/<id>/<index>.wav`. Markers (`[sim:*]`) are read from every text field.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from '../context.js';
import {
  fileUrl,
  parseWith,
  plainErrorBody,
  refuseByMarkers,
  requestMarkers,
  requestOrigin,
  requireBearer,
  SimHttpError,
  useSimErrorShape,
  wildcardParam,
} from '../http.js';
import { stripMarkers, type SimMarkers } from '../markers.js';
import { makeWav } from '../media.js';
import { toUnixSeconds, type TimelineState } from '../timeline.js';
import { polledTask, resultsExpired, taskState, TIMED_FIELDS, timedNow } from '../sim-task.js';

export const SIM_SONGS_PER_TASK = 2;
export const SIM_SONG_SECONDS = 3;
const SONG_TONES_HZ = [440, 554] as const;
const EXCERPT = 200;

const LyricsBody = z.looseObject({ prompt: z.string().min(1), lyrics_model: z.string().optional() });
const MusicBody = z.looseObject({
  prompt: z.string().optional(),
  ai_description_prompt: z.string().optional(),
  title: z.string().max(80).optional(),
  tags: z.string().optional(),
  instrumental: z.boolean().optional(),
  make_instrumental: z.boolean().optional(),
  mv: z.string().optional(),
});

const TunePayload = z.object({
  f: z.literal('tune'),
  /** L = lyrics, M = music */
  a: z.enum(['L', 'M']),
  ...TIMED_FIELDS,
  /** lyrics theme, or the song's lyrics (excerpts) */
  p: z.string(),
  /** music: description excerpt, title, tags, version, instrumental */
  d: z.string().optional(),
  ti: z.string().optional(),
  tg: z.string().optional(),
  mv: z.string().optional(),
  i: z.boolean().optional(),
});
type TunePayload = z.infer<typeof TunePayload>;

const STATUS: Readonly<Record<TimelineState['status'], string>> = { queued: 'SUBMITTED', in_progress: 'IN_PROGRESS', completed: 'SUCCESS', failed: 'FAILURE' };

export function simLyrics(theme: string): string {
  const line = stripMarkers(theme).slice(0, 60) || 'the open road';
  return [`[Verse 1]`, `Walking with ${line}`, `Every step a brand new start`, '', `[Chorus]`, `Sing it loud, ${line}`, `Keep the rhythm in your heart`].join(
    '\n',
  );
}

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

function songs(id: string, task: TunePayload, origin: string, prefix: string, expired: boolean) {
  const title =
    task.ti ??
    (stripMarkers(task.d ?? '')
      .split(/\s+/)
      .slice(0, 4)
      .join(' ') ||
      'Untitled');
  const lyrics = task.i ? '' : task.d !== undefined && task.p === '' ? simLyrics(task.d) : stripMarkers(task.p);
  return Array.from({ length: SIM_SONGS_PER_TASK }, (_, i) => ({
    id: `clip_${hash(id)}_${i}`,
    title,
    tags: task.tg ?? 'pop',
    lyrics,
    mv: task.mv ?? 'tune-v5',
    duration: SIM_SONG_SECONDS,
    audio_url: expired ? '' : fileUrl(origin, prefix, id, `${i}.wav`),
  }));
}

function record(id: string, task: TunePayload, ctx: SimContext, origin: string) {
  const { state: s } = taskState(task, ctx);
  const finished = s.status === 'completed' || s.status === 'failed';
  const base = {
    task_id: id,
    action: task.a === 'L' ? 'LYRICS' : 'MUSIC',
    status: STATUS[s.status],
    progress: `${s.progress}%`,
    submit_time: toUnixSeconds(task.t),
    start_time: toUnixSeconds(task.t),
    finish_time: finished ? toUnixSeconds(s.finishedAt) : 0,
    fail_reason: s.status === 'failed' ? 'simulated generation failure ([sim:fail])' : '',
    result_url: '',
    data: null as unknown,
  };
  if (s.status !== 'completed') return base;
  if (task.a === 'L') return { ...base, data: simLyrics(task.p) };
  const list = songs(id, task, origin, ctx.prefix, resultsExpired(s.finishedAt, ctx));
  return { ...base, data: list, result_url: list[0]?.audio_url ?? '' };
}

function submitted(id: string) {
  return { code: 'success', message: 'submitted', data: id };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);
  const base = (markers: SimMarkers) => ({ f: 'tune' as const, ...timedNow(markers, ctx) });

  app.post('/tune/submit/LYRICS', async (request) => {
    const body = parseWith(LyricsBody, request.body);
    const markers = refuseByMarkers(requestMarkers(request, [body.prompt]));
    return submitted(ctx.codec.encode({ ...base(markers), a: 'L', p: body.prompt.slice(0, EXCERPT) }));
  });

  app.post('/tune/submit/MUSIC', async (request) => {
    const body = parseWith(MusicBody, request.body);
    const instrumental = body.instrumental ?? body.make_instrumental ?? false;
    if (!body.prompt && !body.ai_description_prompt && !(instrumental && body.tags)) {
      throw new SimHttpError(400, 'invalid_request', 'prompt: give the lyrics (prompt) or a description (ai_description_prompt)');
    }
    const markers = refuseByMarkers(requestMarkers(request, [body.prompt, body.ai_description_prompt, body.title, body.tags]));
    const payload: TunePayload = {
      ...base(markers),
      a: 'M',
      p: (body.prompt ?? '').slice(0, EXCERPT),
      ...(body.ai_description_prompt !== undefined && !body.prompt ? { d: body.ai_description_prompt.slice(0, EXCERPT) } : {}),
      ...(body.title !== undefined ? { ti: stripMarkers(body.title) } : {}),
      ...(body.tags !== undefined ? { tg: stripMarkers(body.tags).slice(0, EXCERPT) } : {}),
      ...(body.mv !== undefined ? { mv: body.mv.slice(0, 32) } : {}),
      ...(instrumental ? { i: true } : {}),
    };
    return submitted(ctx.codec.encode(payload));
  });

  app.get<{ Params: { '*': string } }>('/tune/fetch/*', async (request) => {
    const id = wildcardParam(request);
    const task = polledTask(ctx.codec.decode(id, TunePayload), 'task_not_exist: ');
    return { code: 'success', message: '', data: record(id, task, ctx, requestOrigin(request)) };
  });
}

/** `<index>.wav` of a finished, unexpired song task. */
function file(id: string, name: string, ctx: SimContext): SimFile | undefined {
  const task = ctx.codec.decode(id, TunePayload);
  const match = /^(\d)\.wav$/.exec(name);
  if (!task || !match || task.a !== 'M') return undefined;
  const index = Number(match[1]);
  const { state: s } = taskState(task, ctx);
  if (s.status !== 'completed' || index >= SIM_SONGS_PER_TASK || resultsExpired(s.finishedAt, ctx)) return undefined;
  return { contentType: 'audio/wav', body: makeWav(SIM_SONG_SECONDS, 8000, SONG_TONES_HZ[index] ?? 440) };
}

export const tuneSimFamily: SimFamily = { name: 'tune', routes, file };
