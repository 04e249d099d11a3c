/**
 * What the simulated synchronous image upstreams share (sync-images.ts, sync-stream.ts,
 * picgen-sync.ts): the chat body, the stateless result files (`simg` ids), the latency, the
 * token counts, and result URLs (with the `[sim:private-url]` / `[sim:broken-url]` markers).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { SimContext } from './context.js';
import { fileUrl, refuseByMarkers, SimHttpError } from './http.js';
import { imagePngName } from './image-results.js';
import type { PixelSize } from './image-size.js';
import { resultCount, type SimMarkers } from './markers.js';
import { SLOW_FACTOR } from './timeline.js';

/** A sync call takes this many steps. */
export const SYNC_STEPS = 2;

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
export const ChatBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(ContentPart), z.null()]).optional() })).min(1),
  n: z.number().int().min(1).max(128).optional(),
  size: z.string().optional(),
  stream: z.boolean().optional(),
});
export type ChatBody = z.infer<typeof ChatBody>;

/** A sync result's files: `n` PNGs of `w`×`h`, made at `t`, with a nonce `z` for distinct colours. */
export const SyncFilePayload = z.object({
  f: z.literal('simg'),
  w: z.number().int().min(1),
  h: z.number().int().min(1),
  n: z.number().int().min(1),
  t: z.number(),
  z: z.string(),
});
export type SyncFilePayload = z.infer<typeof SyncFilePayload>;

export type Generated = { fileId: string; payload: SyncFilePayload; count: number };

/** How long a sync call takes. */
export const syncDelayMs = (markers: SimMarkers, ctx: SimContext): number => ctx.stepMs * SYNC_STEPS * (markers.slow ? SLOW_FACTOR : 1);

/** Mints `count` result files of `size`, made now. */
export function mintFiles(count: number, size: PixelSize, ctx: SimContext): Generated {
  const payload: SyncFilePayload = { f: 'simg', w: size.width, h: size.height, n: count, t: ctx.now(), z: randomBytes(4).toString('hex') };
  return { fileId: ctx.codec.encode(payload), payload, count };
}

/** Refuses by marker, waits the sync latency, then fails or mints the result files. */
export async function generate(markers: SimMarkers, n: number, size: PixelSize, ctx: SimContext): Promise<Generated> {
  refuseByMarkers(markers);
  const delay = syncDelayMs(markers, ctx);
  if (delay > 0) await sleep(delay);
  if (markers.fail) throw new SimHttpError(500, 'upstream_failed', 'simulated generation failure ([sim:fail])');
  return mintFiles(resultCount(n, markers), size, ctx);
}

/** Rough token counts: 4 characters a text token, one output token per 32×32 pixels. */
export const textTokens = (text: string): number => Math.ceil(text.length / 4);
export const IMAGE_INPUT_TOKENS = 256;
export const imageTokens = (size: PixelSize): number => Math.ceil((size.width * size.height) / 1024);

/**
 * Where result `index` of `fileId` is served; `[sim:private-url]` gives a URL that redirects to
 * the cloud metadata address instead, `[sim:broken-url]` one that answers 404.
 */
export function resultFileUrl(origin: string, ctx: SimContext, fileId: string, index: number, texts: ReadonlyArray<string | undefined>): string {
  const text = texts.join('\n');
  if (/\[sim:private-url\]/i.test(text)) return `${origin}${ctx.prefix}/redirect/metadata`;
  if (/\[sim:broken-url\]/i.test(text)) return fileUrl(origin, ctx.prefix, 'sim_missing', imagePngName(index));
  return fileUrl(origin, ctx.prefix, fileId, imagePngName(index));
}

/** The prompt is the text of the last user message (string content, or its `text` parts). */
export function chatPrompt(body: ChatBody): { text: string; images: number } {
  const user = [...body.messages].reverse().find((m) => m.role === 'user') ?? body.messages[body.messages.length - 1];
  const content = user?.content;
  if (typeof content === 'string') return { text: content, images: 0 };
  const parts = content ?? [];
  return {
    text: parts
      .map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : ''))
      .filter(Boolean)
      .join('\n'),
    images: parts.filter((p) => p.type === 'image_url').length,
  };
}
