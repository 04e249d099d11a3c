/**
 * `art` upstream (spec 2.7, 3.5, 4.14), the same interface the gateway offers:
 *   POST {prefix}/art/submit/{imagine|describe|blend|change}  → `{code: 1, description, result: <id>, properties}`
 *   GET  {prefix}/art/task/<id>/fetch                          → the 2.7 record, from the id and the clock
 * IMAGINE, BLEND, VARIATION and REROLL give a real 2x2 grid PNG (`grid.png`) plus its four
 * quadrants (`0.png` … `3.png`); UPSCALE gives one image in the colour of the chosen quadrant;
 * DESCRIBE gives four prompts as text. Errors are `{code: 4 | 9, description, result: null}`.
 * Markers (`[sim:*]`) are read from `prompt` and `state`.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { PNG } from 'pngjs';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from '../context.js';
import {
  fileUrl,
  notFound,
  parseWith,
  refuseByMarkers,
  requestMarkers,
  requestOrigin,
  requireBearer,
  SimHttpError,
  useSimErrorShape,
  wildcardParam,
} from '../http.js';
import { markersFromFlags, type SimMarkers } from '../markers.js';
import { makePng, seedColour, type Rgb } from '../media.js';
import { resultsExpired, taskState, TIMED_FIELDS, timedNow } from '../sim-task.js';

const DATA_URI = z.string().regex(/^data:image\/[\w.+-]+;base64,/);
const Common = { state: z.string().optional() };
const ImagineBody = z.looseObject({ prompt: z.string().min(1), base64Array: z.array(DATA_URI).max(5).optional(), ...Common });
const DescribeBody = z.looseObject({ base64: DATA_URI, ...Common });
const BlendBody = z.looseObject({
  base64Array: z.array(DATA_URI).min(2).max(5),
  dimensions: z.enum(['PORTRAIT', 'SQUARE', 'LANDSCAPE']).optional(),
  ...Common,
});
const ChangeBody = z.looseObject({
  taskId: z.string().min(1),
  action: z.enum(['UPSCALE', 'VARIATION', 'REROLL']),
  index: z.number().int().min(1).max(4).optional(),
  ...Common,
});

const ACTIONS = { I: 'IMAGINE', D: 'DESCRIBE', B: 'BLEND', U: 'UPSCALE', V: 'VARIATION', R: 'REROLL' } as const;
const GRID_KINDS = ['I', 'B', 'V', 'R'];
const GRID_SIDES = { SQUARE: [1024, 1024], PORTRAIT: [896, 1344], LANDSCAPE: [1344, 896] } as const;

const ArtPayload = z.object({
  f: z.literal('art'),
  a: z.enum(['I', 'D', 'B', 'U', 'V', 'R']),
  ...TIMED_FIELDS,
  /** main image size (grid, or the upscaled image) */
  w: z.number().int().min(1),
  h: z.number().int().min(1),
  /** UPSCALE: colour seed of the quadrant it enlarges */
  c: z.string().optional(),
  /** prompt excerpt (IMAGINE; CHANGE: the parent's) */
  p: z.string().optional(),
});
type ArtPayload = z.infer<typeof ArtPayload>;

const artErrorBody = (e: SimHttpError) => ({ code: e.status >= 500 ? 9 : 4, description: e.message, result: null });
const hex = (text: string): string => createHash('sha256').update(text).digest('hex');
export const cellSeed = (id: string, index: number): string => hex(`${id}:${index}`).slice(0, 16);
const isGrid = (task: ArtPayload): boolean => GRID_KINDS.includes(task.a);

/** A `width`×`height` PNG split into four quadrants, each in its seed's colour. */
export function makeGridPng(width: number, height: number, seeds: readonly string[]): Buffer {
  const options = { width, height, colorType: 2, inputColorType: 2, inputHasAlpha: false, filterType: 1 } as const;
  const [c0, c1, c2, c3] = [0, 1, 2, 3].map((i) => seedColour(seeds[i] ?? i));
  const half = Math.floor(width / 2);
  const row = (left: Rgb | undefined, right: Rgb | undefined): Buffer => {
    const r = Buffer.alloc(width * 3);
    for (let x = 0; x < width; x++) r.set((x < half ? left : right) ?? [0, 0, 0], x * 3);
    return r;
  };
  const top = row(c0, c1);
  const bottom = row(c2, c3);
  const png = new PNG(options);
  png.data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) (y < Math.floor(height / 2) ? top : bottom).copy(png.data, y * width * 3);
  return PNG.sync.write(png, options);
}

const SUBJECTS = ['a lighthouse', 'a red fox', 'an old city street', 'a mountain lake', 'a glass teapot', 'a paper boat'];
const STYLES = ['watercolor', 'cinematic lighting', 'isometric render', 'oil painting', 'soft pastel', 'film photograph'];

/** Four prompts, deterministic in the task id. */
export function describePrompts(id: string): string {
  const h = hex(id);
  return [0, 1, 2, 3]
    .map(
      (i) =>
        `${i + 1}. ${SUBJECTS[parseInt(h.slice(i * 2, i * 2 + 2), 16) % SUBJECTS.length]}, ${STYLES[parseInt(h.slice(8 + i * 2, 10 + i * 2), 16) % STYLES.length]} --ar 1:1`,
    )
    .join('\n\n');
}

function record(id: string, task: ArtPayload, ctx: SimContext, origin: string) {
  const { state: s } = taskState(task, ctx);
  const finished = s.status === 'completed' || s.status === 'failed';
  const base = {
    id,
    action: ACTIONS[task.a],
    prompt: task.p ?? '',
    description: '',
    status: s.status === 'completed' ? 'SUCCESS' : s.status === 'failed' ? 'FAILURE' : 'IN_PROGRESS',
    progress: `${s.progress}%`,
    failReason: s.status === 'failed' ? 'simulated generation failure ([sim:fail])' : '',
    imageUrl: '',
    images: [] as string[],
    width: 0,
    height: 0,
    seed: parseInt(hex(id).slice(0, 8), 16) % 2_000_000_000,
    submitTime: task.t,
    startTime: task.t,
    finishTime: finished ? s.finishedAt : 0,
  };
  if (s.status !== 'completed') return base;
  if (task.a === 'D') return { ...base, prompt: describePrompts(id) };
  const expired = resultsExpired(s.finishedAt, ctx);
  const url = (name: string) => (expired ? '' : fileUrl(origin, ctx.prefix, id, name));
  const images = expired ? [] : isGrid(task) ? [0, 1, 2, 3].map((i) => url(`${i}.png`)) : [url('0.png')];
  return { ...base, imageUrl: isGrid(task) ? url('grid.png') : url('0.png'), images, width: task.w, height: task.h };
}

/** The grid a CHANGE works on: a finished grid task minted here. */
function parentOf(taskId: string, ctx: SimContext): ArtPayload & { id: string } {
  const parent = ctx.codec.decode(taskId, ArtPayload);
  if (!parent) throw notFound('task_no_found', 'taskId: task_no_found');
  if (!isGrid(parent)) throw new SimHttpError(400, 'invalid_request', `taskId: a ${ACTIONS[parent.a]} result cannot be changed`);
  if (taskState(parent, ctx).state.status !== 'completed') throw new SimHttpError(400, 'invalid_request', 'taskId: the task is not finished');
  return { ...parent, id: taskId };
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, artErrorBody);
  app.addHook('onRequest', requireBearer);
  const mint = (markers: SimMarkers, rest: Pick<ArtPayload, 'a' | 'w' | 'h'> & Partial<ArtPayload>) => {
    refuseByMarkers(markers);
    const id = ctx.codec.encode({ f: 'art', ...timedNow(markers, ctx), ...rest });
    return { code: 1, description: 'Submit success', result: id, properties: {} };
  };

  app.post('/art/submit/imagine', async (request) => {
    const body = parseWith(ImagineBody, request.body);
    return mint(requestMarkers(request, [body.prompt, body.state]), { a: 'I', w: 1024, h: 1024, p: body.prompt.slice(0, 200) });
  });
  app.post('/art/submit/describe', async (request) => {
    const body = parseWith(DescribeBody, request.body);
    return mint(requestMarkers(request, [body.state]), { a: 'D', w: 1, h: 1 });
  });
  app.post('/art/submit/blend', async (request) => {
    const body = parseWith(BlendBody, request.body);
    const [w, h] = GRID_SIDES[body.dimensions ?? 'SQUARE'];
    return mint(requestMarkers(request, [body.state]), { a: 'B', w, h });
  });
  app.post('/art/submit/change', async (request) => {
    const body = parseWith(ChangeBody, request.body);
    if ((body.action === 'REROLL') !== (body.index === undefined))
      throw new SimHttpError(400, 'invalid_request', 'index: required for UPSCALE and VARIATION, not for REROLL');
    const markers = requestMarkers(request, [body.state]);
    const parent = parentOf(body.taskId, ctx);
    const p = parent.p !== undefined ? { p: parent.p } : {};
    if (body.action === 'UPSCALE') {
      const index = (body.index ?? 1) - 1;
      return mint(markers, { a: 'U', w: parent.w, h: parent.h, c: cellSeed(parent.id, index), ...p });
    }
    return mint(markers, { a: body.action === 'VARIATION' ? 'V' : 'R', w: parent.w, h: parent.h, ...p });
  });

  app.get<{ Params: { '*': string } }>('/art/task/*', async (request) => {
    const [id = '', fetch, ...rest] = wildcardParam(request).split('/');
    if (fetch !== 'fetch' || rest.length > 0) throw notFound('not_found', 'no such route; use /art/task/<id>/fetch');
    const task = ctx.codec.decode(id, ArtPayload);
    if (!task || markersFromFlags(task.k).lostOnPoll) throw notFound('task_no_found', 'task_no_found');
    return record(id, task, ctx, requestOrigin(request));
  });
}

/** `grid.png` and `0.png` … `3.png` of a finished grid; `0.png` of an upscale. */
function file(id: string, name: string, ctx: SimContext): SimFile | undefined {
  const task = ctx.codec.decode(id, ArtPayload);
  if (!task || task.a === 'D') return undefined;
  const { state: s } = taskState(task, ctx);
  if (s.status !== 'completed' || resultsExpired(s.finishedAt, ctx)) return undefined;
  const seeds = [0, 1, 2, 3].map((i) => cellSeed(id, i));
  if (isGrid(task) && name === 'grid.png') return { contentType: 'image/png', body: makeGridPng(task.w, task.h, seeds) };
  const match = /^([0-3])\.png$/.exec(name);
  if (!match) return undefined;
  if (!isGrid(task)) return match[1] === '0' ? { contentType: 'image/png', body: makePng(task.w, task.h, task.c ?? id) } : undefined;
  return { contentType: 'image/png', body: makePng(Math.floor(task.w / 2), Math.floor(task.h / 2), seeds[Number(match[1])] ?? id) };
}

export const artSimFamily: SimFamily = { name: 'art', routes, file };
