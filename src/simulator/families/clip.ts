/**
 * clip upstream (spec 4.12, objects of 2.5):
 *   POST {prefix}/clip/v1/videos/{text2video|image2video}        submit, `task_status: submitted`
 *   GET  {prefix}/clip/v1/videos/{text2video|image2video}/:id    the task, from the id and the clock
 * Answers only under the path the task was submitted on. Renders `duration` seconds (default 5,
 * or `[sim:dur=N]`) in the requested mode; the video is `{prefix}/files/<id>/video.mp4`.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily } from '../context.js';
import { parseWith, requireBearer, useSimErrorShape, wildcardParam } from '../http.js';
import { decodeVideoTask, mintVideoTask, openaiErrorBody, videoFileOf, videoFileUrl, videoMarkers, type VideoTaskPayload } from '../video-common.js';
import { polledTask, taskState } from '../sim-task.js';

const FAMILY = 'clip';
const PATH = '/clip/v1/videos';
const ACTIONS = ['text2video', 'image2video'] as const;
const DEFAULT_SECONDS = 5;

const SubmitBody = z.looseObject({
  model_name: z.string().min(1),
  prompt: z.string().optional(),
  mode: z.enum(['std', 'pro']).optional(),
  duration: z.union([z.number().int().min(1), z.string().regex(/^\d+$/)]).optional(),
});

const STATUS = { queued: 'submitted', in_progress: 'processing', completed: 'succeed', failed: 'failed' } as const;

function taskBody(id: string, task: VideoTaskPayload, ctx: SimContext, url: string) {
  const { state } = taskState(task, ctx);
  const done = state.status === 'completed';
  const updated = state.status === 'completed' || state.status === 'failed' ? state.finishedAt : ctx.now();
  return {
    code: 0,
    message: 'SUCCEED',
    request_id: randomUUID(),
    data: {
      task_id: id,
      task_status: STATUS[state.status],
      task_status_msg: state.status === 'failed' ? 'simulated generation failure ([sim:fail])' : '',
      created_at: task.t,
      updated_at: updated,
      task_result: { videos: done ? [{ id: `${id}-0`, url, duration: task.d }] : [] },
      final_unit_deduction: done ? task.d : 0,
    },
  };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, openaiErrorBody);
  app.addHook('onRequest', requireBearer);

  for (const action of ACTIONS) {
    app.post(`${PATH}/${action}`, async (request) => {
      const body = parseWith(SubmitBody, request.body);
      const { markers, render } = videoMarkers(request, [body.prompt]);
      const seconds = Number(body.duration ?? DEFAULT_SECONDS);
      // The "resolution" of a clip task is its mode; `[sim:res=…]` does not apply here.
      const durationOnly = render.seconds !== undefined ? { seconds: render.seconds } : {};
      const { id, task } = mintVideoTask(ctx, FAMILY, {
        model: body.model_name,
        seconds,
        resolution: body.mode ?? 'std',
        markers,
        render: durationOnly,
        extra: action,
      });
      return { code: 0, message: 'SUCCEED', request_id: randomUUID(), data: { task_id: id, task_status: 'submitted', created_at: task.t, updated_at: task.t } };
    });

    app.get<{ Params: { '*': string } }>(`${PATH}/${action}/*`, async (request) => {
      const id = wildcardParam(request);
      const decoded = decodeVideoTask(ctx, FAMILY, id);
      const task = polledTask(decoded?.a === action ? decoded : undefined);
      return taskBody(id, task, ctx, videoFileUrl(request, ctx, id));
    });
  }
}

export const clipSimFamily: SimFamily = { name: FAMILY, routes, file: videoFileOf(FAMILY) };
