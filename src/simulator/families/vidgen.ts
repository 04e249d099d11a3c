/**
 * vidgen upstream (spec 4.3 / 4.4, objects of 2.3):
 *   POST {prefix}/v1/video/generations       submit, answers the submit object `queued`
 *   GET  {prefix}/v1/video/generations/:id   the envelope, recomputed from the id and the clock
 * `data.data` is a native task result (status, duration, resolution, usage, `content.video_url`).
 * Renders `seconds` (default 5) at `metadata.resolution` (default 720p), unless
 * `[sim:dur=N]` / `[sim:res=R]` say otherwise.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily } from '../context.js';
import { parseWith, requireBearer, useSimErrorShape, wildcardParam } from '../http.js';
import { toUnixSeconds } from '../timeline.js';
import { decodeVideoTask, mintVideoTask, openaiErrorBody, videoFileOf, videoFileUrl, videoMarkers, type VideoTaskPayload } from '../video-common.js';
import { polledTask, taskState } from '../sim-task.js';

const FAMILY = 'vidgen';
const PATH = '/v1/video/generations';
const DEFAULT_SECONDS = 5;
const DEFAULT_RESOLUTION = '720p';
/** Rough output tokens per second of video, as the native usage reports them. */
const TOKENS_PER_SECOND = 20_000;

const SubmitBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1),
  seconds: z.union([z.number().int().min(0), z.string().regex(/^\d+$/)]).optional(),
  metadata: z.looseObject({ resolution: z.string().optional(), ratio: z.string().optional() }).optional(),
});

const NATIVE_STATUS = { queued: 'queued', in_progress: 'running', completed: 'succeeded', failed: 'failed' } as const;
const ENVELOPE_STATUS = { queued: 'NOT_START', in_progress: 'IN_PROGRESS', completed: 'SUCCESS', failed: 'FAILURE' } as const;

function envelope(id: string, task: VideoTaskPayload, ctx: SimContext, url: string) {
  const { state } = taskState(task, ctx);
  const created = toUnixSeconds(task.t);
  const finished = state.status === 'completed' || state.status === 'failed' ? toUnixSeconds(state.finishedAt) : 0;
  const done = state.status === 'completed';
  const native = {
    id,
    model: task.m,
    status: NATIVE_STATUS[state.status],
    duration: task.d,
    resolution: task.r,
    created_at: created,
    updated_at: finished || toUnixSeconds(ctx.now()),
    ...(done ? { content: { video_url: url }, usage: { completion_tokens: task.d * TOKENS_PER_SECOND, total_tokens: task.d * TOKENS_PER_SECOND } } : {}),
    ...(state.status === 'failed' ? { error: { code: 'upstream_failed', message: 'simulated generation failure ([sim:fail])' } } : {}),
  };
  return {
    code: 'success',
    message: '',
    data: {
      id: task.t,
      task_id: id,
      platform: FAMILY,
      status: ENVELOPE_STATUS[state.status],
      progress: `${state.progress}%`,
      fail_reason: state.status === 'failed' ? 'simulated generation failure ([sim:fail])' : '',
      result_url: done ? url : '',
      created_at: created,
      updated_at: native.updated_at,
      submit_time: created,
      start_time: state.status === 'queued' ? 0 : created,
      finish_time: finished,
      properties: {},
      data: native,
    },
  };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, openaiErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(PATH, async (request) => {
    const body = parseWith(SubmitBody, request.body);
    const { markers, render } = videoMarkers(request, [body.prompt]);
    const seconds = Number(body.seconds ?? 0) || DEFAULT_SECONDS;
    const resolution = body.metadata?.resolution ?? DEFAULT_RESOLUTION;
    const { id, task } = mintVideoTask(ctx, FAMILY, { model: body.model, seconds, resolution, markers, render });
    return { id, task_id: id, object: 'video', model: task.m, status: 'queued', progress: 0, created_at: toUnixSeconds(task.t) };
  });

  app.get<{ Params: { '*': string } }>(`${PATH}/*`, async (request) => {
    const id = wildcardParam(request);
    const task = polledTask(decodeVideoTask(ctx, FAMILY, id));
    return envelope(id, task, ctx, videoFileUrl(request, ctx, id));
  });
}

export const vidgenSimFamily: SimFamily = { name: FAMILY, routes, file: videoFileOf(FAMILY) };
