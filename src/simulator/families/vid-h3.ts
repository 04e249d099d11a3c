/**
 * Vid-H3 upstream (spec 4.13, object 2.4), OpenAI-style:
 *   POST {prefix}/v1/videos               submit, answers the video object `queued`
 *   GET  {prefix}/v1/videos/:id           the video object, recomputed from the id and the clock
 *   GET  {prefix}/v1/videos/:id/content   the MP4 once completed (bearer auth, like the others)
 * Renders `seconds` (default 5) at `size` (default 768P), unless `[sim:dur=N]` / `[sim:res=R]`
 * in the prompt or a text item of `metadata.content` say otherwise.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily } from '../context.js';
import { notFound, parseWith, requireBearer, SimHttpError, useSimErrorShape, wildcardParam } from '../http.js';
import { toUnixSeconds } from '../timeline.js';
import { decodeVideoTask, mintVideoTask, openaiErrorBody, videoBytes, videoMarkers, type VideoTaskPayload } from '../video-common.js';
import { taskState } from '../sim-task.js';

const FAMILY = 'vid-h3';
const PATH = '/v1/videos';
const DEFAULT_SECONDS = 5;
const DEFAULT_RESOLUTION = '768P';

const SubmitBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().optional(),
  seconds: z.union([z.number().int().min(1), z.string().regex(/^\d+$/)]).optional(),
  size: z.string().optional(),
  metadata: z.looseObject({ content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional() }).optional(),
});

function videoObject(id: string, task: VideoTaskPayload, ctx: SimContext) {
  const { state } = taskState(task, ctx);
  const finished = state.status === 'completed' || state.status === 'failed';
  return {
    id,
    object: 'video',
    model: task.m,
    status: state.status,
    progress: state.progress,
    created_at: toUnixSeconds(task.t),
    completed_at: finished ? toUnixSeconds(state.finishedAt) : null,
    seconds: String(task.d),
    size: task.r,
    error: state.status === 'failed' ? { code: 'upstream_failed', message: 'simulated generation failure ([sim:fail])' } : null,
  };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, openaiErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(PATH, async (request) => {
    const body = parseWith(SubmitBody, request.body);
    const texts = [body.prompt, ...(body.metadata?.content ?? []).map((item) => item.text)];
    const { markers, render } = videoMarkers(request, texts);
    const seconds = Number(body.seconds ?? DEFAULT_SECONDS);
    const { id, task } = mintVideoTask(ctx, FAMILY, { model: body.model, seconds, resolution: body.size ?? DEFAULT_RESOLUTION, markers, render });
    return videoObject(id, task, ctx);
  });

  app.get<{ Params: { '*': string } }>(`${PATH}/*`, async (request, reply) => {
    const [id = '', part, ...rest] = wildcardParam(request).split('/');
    const task = decodeVideoTask(ctx, FAMILY, id);
    if (!task || rest.length > 0 || (part !== undefined && part !== 'content')) throw notFound('video_not_found', 'no such video');
    const { markers, state } = taskState(task, ctx);
    if (markers.lostOnPoll) throw notFound('video_not_found', 'the upstream lost this video ([sim:4xx-poll])');
    if (part === undefined) return videoObject(id, task, ctx);
    if (state.status !== 'completed') throw new SimHttpError(409, 'video_not_ready', `the video is ${state.status}`);
    return reply.header('content-type', 'video/mp4').send(videoBytes(id, task));
  });
}

export const vidH3SimFamily: SimFamily = { name: FAMILY, routes };
