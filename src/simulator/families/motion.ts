/**
 * motion upstream (spec 4.15, objects of 2.8), the family's native asynchronous API:
 *   POST {prefix}/vendor/api/v1/services/aigc/video-generation/video-synthesis   text-to-video
 *   POST {prefix}/vendor/api/v1/services/aigc/image2video/video-synthesis        image-to-video
 *   GET  {prefix}/vendor/api/v1/tasks/:id                                        the task
 * Bodies are `{model, input, parameters}`. Renders `parameters.duration` seconds (default 5) at
 * `parameters.resolution`, else the tier of `parameters.size`, else 720P — unless `[sim:dur=N]` /
 * `[sim:res=R]` in `input.prompt` say otherwise. Errors are `{code, message}`.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseMotionSize, tierName, tierOfPixels } from '../../families/motion/sizes.js';
import type { SimContext, SimFamily } from '../context.js';
import { parseWith, plainErrorBody, requireBearer, useSimErrorShape, wildcardParam } from '../http.js';
import { stripMarkers } from '../markers.js';
import { decodeVideoTask, mintVideoTask, videoFileOf, videoFileUrl, videoMarkers, type VideoTaskPayload } from '../video-common.js';
import { polledTask, taskState } from '../sim-task.js';

const FAMILY = 'motion';
const API = '/vendor/api/v1';
const SUBMIT_PATHS = [`${API}/services/aigc/video-generation/video-synthesis`, `${API}/services/aigc/image2video/video-synthesis`] as const;
const DEFAULT_SECONDS = 5;
const DEFAULT_RESOLUTION = '720P';

const SubmitBody = z.looseObject({
  model: z.string().min(1),
  input: z.looseObject({ prompt: z.string().optional() }),
  parameters: z.looseObject({ duration: z.number().int().min(1).optional(), resolution: z.string().optional(), size: z.string().optional() }).optional(),
});

const STATUS = { queued: 'PENDING', in_progress: 'RUNNING', completed: 'SUCCEEDED', failed: 'FAILED' } as const;
const time = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

function renderedResolution(parameters: z.infer<typeof SubmitBody>['parameters']): string {
  const named = parameters?.resolution ? tierName(parameters.resolution) : undefined;
  const pixels = parameters?.size ? parseMotionSize(parameters.size) : undefined;
  return named ?? (pixels ? tierOfPixels(pixels.width, pixels.height) : undefined) ?? DEFAULT_RESOLUTION;
}

function taskBody(id: string, task: VideoTaskPayload, ctx: SimContext, url: string) {
  const { state } = taskState(task, ctx);
  const finished = state.status === 'completed' || state.status === 'failed';
  const output = {
    task_id: id,
    task_status: STATUS[state.status],
    submit_time: time(task.t),
    ...(state.status !== 'queued' ? { scheduled_time: time(task.t + task.s) } : {}),
    ...(finished ? { end_time: time(state.finishedAt) } : {}),
    ...(state.status === 'completed' ? { video_url: url, orig_prompt: task.a ?? '' } : {}),
    ...(state.status === 'failed' ? { code: 'InternalError', message: 'simulated generation failure ([sim:fail])' } : {}),
  };
  const usage = state.status === 'completed' ? { usage: { video_duration: task.d, video_count: 1, SR: Number.parseInt(task.r, 10) } } : {};
  return { request_id: randomUUID(), output, ...usage };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);

  for (const path of SUBMIT_PATHS) {
    app.post(path, async (request) => {
      const body = parseWith(SubmitBody, request.body);
      const { markers, render } = videoMarkers(request, [body.input.prompt]);
      const seconds = body.parameters?.duration ?? DEFAULT_SECONDS;
      const resolution = renderedResolution(body.parameters);
      const prompt = stripMarkers(body.input.prompt ?? '').slice(0, 64);
      const { id } = mintVideoTask(ctx, FAMILY, { model: body.model, seconds, resolution, markers, render, extra: prompt });
      return { request_id: randomUUID(), output: { task_id: id, task_status: 'PENDING' } };
    });
  }

  app.get<{ Params: { '*': string } }>(`${API}/tasks/*`, async (request) => {
    const id = wildcardParam(request);
    const task = polledTask(decodeVideoTask(ctx, FAMILY, id));
    return taskBody(id, task, ctx, videoFileUrl(request, ctx, id));
  });
}

export const motionSimFamily: SimFamily = { name: FAMILY, routes, file: videoFileOf(FAMILY) };
