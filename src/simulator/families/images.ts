/**
 * Async image upstream (spec 4.9 / 4.10, task object 2.1):
 *   POST {prefix}/v1/images/async/generations       submit, answers the task `queued` at 0 %
 *   GET  {prefix}/v1/images/async/generations/:id   the task, recomputed from its id and the clock
 * Results: `b64_json` + `revised_prompt` for `pro-image` (or `response_format: "b64_json"`),
 * otherwise `url`s at `{prefix}/files/<id>/<index>.png` with `metadata.assetsExpireAt`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from '../context.js';
import { fileUrl, parseWith, plainErrorBody, refuseByMarkers, requestMarkers, requestOrigin, requireBearer, useSimErrorShape, wildcardParam } from '../http.js';
import { parseImageSize } from '../image-size.js';
import { resultCount, stripMarkers } from '../markers.js';
import { imagePngName, imageResultKind, parsePngName } from '../image-results.js';
import { makePng } from '../media.js';
import { toUnixSeconds, type TimelineState } from '../timeline.js';
import { polledTask, resultsExpired, taskState, TIMED_FIELDS, timedNow } from '../sim-task.js';

export const ASYNC_IMAGES_PATH = '/v1/images/async/generations';
const REVISED_PROMPT_CHARS = 64;

const SubmitBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1),
  n: z.number().int().min(1).max(128).optional(),
  size: z.string().optional(),
  image: z.string().optional(),
  images: z.array(z.string()).optional(),
  response_format: z.enum(['url', 'b64_json']).optional(),
});

/** Everything a later GET needs, inside the id (see task-id.ts). */
const ImageTaskPayload = z.object({
  f: z.literal('img'),
  /** model */
  m: z.string(),
  n: z.number().int().min(1),
  w: z.number().int().min(1),
  h: z.number().int().min(1),
  /** result kind */
  r: z.enum(['url', 'b64']),
  ...TIMED_FIELDS,
  /** prompt excerpt for `revised_prompt` (b64 results only) */
  p: z.string().optional(),
});
export type ImageTaskPayload = z.infer<typeof ImageTaskPayload>;

export type ImageItem = { url: string } | { b64_json: string; revised_prompt: string };

export type ImageTaskView = {
  id: string;
  task_id: string;
  object: 'image.task';
  model: string;
  status: TimelineState['status'];
  progress: string;
  created_at: number;
  completed_at?: number;
  data: ImageItem[];
  error?: { code: string; message: string };
  usage?: { units: number };
  metadata?: { assetsExpireAt: number };
};

function view(id: string, task: ImageTaskPayload, ctx: SimContext, origin: string): ImageTaskView {
  const { markers, state } = taskState(task, ctx);
  const base: ImageTaskView = {
    id,
    task_id: id,
    object: 'image.task',
    model: task.m,
    status: state.status,
    progress: `${state.progress}%`,
    created_at: toUnixSeconds(task.t),
    data: [],
  };
  if (state.status === 'failed') {
    return { ...base, completed_at: toUnixSeconds(state.finishedAt), error: { code: 'upstream_failed', message: 'simulated generation failure ([sim:fail])' } };
  }
  if (state.status !== 'completed') return base;

  const count = resultCount(task.n, markers);
  const expiresAt = state.finishedAt + ctx.assetRetentionMs;
  const done = { ...base, completed_at: toUnixSeconds(state.finishedAt), usage: { units: count } };
  if (task.r === 'b64') {
    const revised = task.p ?? '';
    const data = Array.from({ length: count }, (_, i) => ({ b64_json: makePng(task.w, task.h, `${id}:${i}`).toString('base64'), revised_prompt: revised }));
    return { ...done, data };
  }
  const expired = resultsExpired(state.finishedAt, ctx);
  const data = expired ? [] : Array.from({ length: count }, (_, i) => ({ url: fileUrl(origin, ctx.prefix, id, imagePngName(i)) }));
  return { ...done, data, metadata: { assetsExpireAt: toUnixSeconds(expiresAt) } };
}

function decodeTask(id: string, ctx: SimContext): ImageTaskPayload | undefined {
  return ctx.codec.decode(id, ImageTaskPayload);
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(ASYNC_IMAGES_PATH, async (request) => {
    const body = parseWith(SubmitBody, request.body);
    const markers = refuseByMarkers(requestMarkers(request, [body.prompt]));
    const kind = imageResultKind(body.model, body.response_format);
    const { width, height } = parseImageSize(body.size);
    const payload: ImageTaskPayload = {
      f: 'img',
      m: body.model,
      n: body.n ?? 1,
      w: width,
      h: height,
      r: kind,
      ...timedNow(markers, ctx),
      ...(kind === 'b64' ? { p: stripMarkers(body.prompt).slice(0, REVISED_PROMPT_CHARS) } : {}),
    };
    const id = ctx.codec.encode(payload);
    const submitted: ImageTaskView = {
      id,
      task_id: id,
      object: 'image.task',
      model: payload.m,
      status: 'queued',
      progress: '0%',
      created_at: toUnixSeconds(payload.t),
      data: [],
    };
    return submitted;
  });

  app.get<{ Params: { '*': string } }>(`${ASYNC_IMAGES_PATH}/*`, async (request) => {
    const id = wildcardParam(request);
    const task = polledTask(decodeTask(id, ctx), 'task_not_exist: ');
    return view(id, task, ctx, requestOrigin(request));
  });
}

/** `<index>.png` of a completed, unexpired url-kind task, as many as it returned. */
function file(id: string, name: string, ctx: SimContext): SimFile | undefined {
  const task = decodeTask(id, ctx);
  const index = parsePngName(name);
  if (!task || index === undefined || task.r !== 'url') return undefined;
  const { markers, state } = taskState(task, ctx);
  if (state.status !== 'completed' || markers.lostOnPoll) return undefined;
  if (index >= resultCount(task.n, markers) || resultsExpired(state.finishedAt, ctx)) return undefined;
  return { contentType: 'image/png', body: makePng(task.w, task.h, `${id}:${index}`) };
}

export const asyncImagesSimFamily: SimFamily = { name: 'images-async', routes, file };
