/**
 * What the four simulated video upstreams (vidgen, Vid-H3, clip, motion) share: a signed task
 * id holding what the task "renders" (seconds and resolution, decided at submit), the timeline
 * state, and the MP4 result file at `{prefix}/files/<id>/video.mp4` (H.264 that browsers play; media.ts).
 *
 * Besides the common `[sim:*]` markers, video prompts take two of their own, so settlement on a
 * delivery different from the request can be exercised:
 *   `[sim:res=720p]`  render this resolution instead of the requested one
 *   `[sim:dur=8]`     render this many seconds instead of the requested duration
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from './context.js';
import { fileUrl, refuseByMarkers, requestMarkers, requestOrigin, type SimErrorRenderer } from './http.js';
import type { SimMarkers } from './markers.js';
import { makeMp4 } from './media.js';
import { resultsExpired, taskState, TIMED_FIELDS, timedNow } from './sim-task.js';

export const VIDEO_FILE_NAME = 'video.mp4';
const MAX_RENDER_SECONDS = 3600;

const RES_MARKER = /\[sim:res=([a-z0-9]{1,8})\]/i;
const DUR_MARKER = /\[sim:dur=(\d{1,4})\]/i;

export type RenderOverrides = Readonly<{ resolution?: string; seconds?: number }>;

/** `[sim:res=…]` and `[sim:dur=…]` in the texts; the first of each kind wins. */
export function parseRenderMarkers(texts: ReadonlyArray<string | null | undefined>): RenderOverrides {
  const text = texts.filter((t): t is string => typeof t === 'string').join('\n');
  const res = RES_MARKER.exec(text)?.[1];
  const dur = DUR_MARKER.exec(text)?.[1];
  const seconds = dur === undefined ? undefined : Math.min(MAX_RENDER_SECONDS, Number(dur));
  return { ...(res !== undefined ? { resolution: res } : {}), ...(seconds !== undefined ? { seconds } : {}) };
}

/** Common markers and render overrides of a submit (texts plus the `x-sim-markers` header); throws the refusals the markers ask for. */
export function videoMarkers(request: FastifyRequest, texts: ReadonlyArray<string | null | undefined>): { markers: SimMarkers; render: RenderOverrides } {
  const header = request.headers['x-sim-markers'];
  const markers = refuseByMarkers(requestMarkers(request, texts));
  return { markers, render: parseRenderMarkers([...texts, Array.isArray(header) ? header.join(' ') : header]) };
}

/** Everything a later GET needs, inside the id (see task-id.ts). */
const VideoTaskPayload = z.object({
  /** minting family */
  f: z.string(),
  /** model */
  m: z.string(),
  /** seconds rendered */
  d: z.number().min(0),
  /** resolution (tier) rendered */
  r: z.string(),
  ...TIMED_FIELDS,
  /** family-specific extra: clip's submit path, motion's prompt echoed as orig_prompt */
  a: z.string().optional(),
});
export type VideoTaskPayload = z.infer<typeof VideoTaskPayload>;

export type VideoTaskSpec = Readonly<{ model: string; seconds: number; resolution: string; markers: SimMarkers; render: RenderOverrides; extra?: string }>;

/** Mints the task id; the render markers win over what was asked for. */
export function mintVideoTask(ctx: SimContext, family: string, spec: VideoTaskSpec): { id: string; task: VideoTaskPayload } {
  const task: VideoTaskPayload = {
    f: family,
    m: spec.model,
    d: spec.render.seconds ?? spec.seconds,
    r: spec.render.resolution ?? spec.resolution,
    ...timedNow(spec.markers, ctx),
    ...(spec.extra !== undefined ? { a: spec.extra } : {}),
  };
  return { id: ctx.codec.encode(task), task };
}

/** The payload of an id this family minted, else undefined. */
export function decodeVideoTask(ctx: SimContext, family: string, id: string): VideoTaskPayload | undefined {
  const task = ctx.codec.decode(id, VideoTaskPayload);
  return task?.f === family ? task : undefined;
}

export function videoFileUrl(request: FastifyRequest, ctx: SimContext, id: string): string {
  return fileUrl(requestOrigin(request), ctx.prefix, id, VIDEO_FILE_NAME);
}

/** 16:9 pixels of a resolution name: `720p` → 1280×720, `768P` → 1366×768, `2K` → 2560×1440, `4k` → 3840×2160. */
export function pixelsOf(resolution: string): { width: number; height: number } {
  const name = resolution.toLowerCase();
  const height = name === '4k' ? 2160 : name === '2k' ? 1440 : Number(/^(\d{3,4})p$/.exec(name)?.[1] ?? 720);
  const width = Math.round((height * 16) / 9 / 2) * 2;
  return { width, height };
}

export function videoBytes(id: string, task: VideoTaskPayload): Buffer {
  return makeMp4(task.d, { ...pixelsOf(task.r), seed: id });
}

/** `video.mp4` of a completed, unexpired task the family minted. */
export function videoFileOf(family: string): NonNullable<SimFamily['file']> {
  return (id: string, name: string, ctx: SimContext): SimFile | undefined => {
    if (name !== VIDEO_FILE_NAME) return undefined;
    const task = decodeVideoTask(ctx, family, id);
    if (!task) return undefined;
    const { markers, state } = taskState(task, ctx);
    if (state.status !== 'completed' || markers.lostOnPoll || resultsExpired(state.finishedAt, ctx)) return undefined;
    return { contentType: 'video/mp4', body: videoBytes(id, task) };
  };
}

/** `{error:{message, type, param, code}}`: the vidgen, Vid-H3 and clip error body. */
export const openaiErrorBody: SimErrorRenderer = (error) => ({
  error: { message: error.message, type: error.status >= 500 ? 'server_error' : 'invalid_request_error', param: '', code: error.code },
});
