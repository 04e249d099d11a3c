/**
 * Synchronous image upstream (spec 4.5 / 4.6, shapes of 2.2), answering after two steps:
 *   POST {prefix}/v1/images/generations   images-style `{created, data, usage}`
 *   POST {prefix}/v1/chat/completions     chat-style object whose content is a Markdown image link
 * URL results point at `{prefix}/files/<file id>/<index>.png`, where the file id is a signed
 * `simg` payload (size, count, time), so the files stay servable without any state.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from './context.js';
import { fileUrl, parseWith, plainErrorBody, refuseByMarkers, requestMarkers, requestOrigin, requireBearer, SimHttpError, useSimErrorShape } from './http.js';
import { imagePngName, imageResultKind, parsePngName } from './images.js';
import { parseImageSize, type PixelSize } from './image-size.js';
import { resultCount, stripMarkers, type SimMarkers } from './markers.js';
import { makePng } from './media.js';
import { SLOW_FACTOR, toUnixSeconds } from './timeline.js';

export const SYNC_IMAGES_PATH = '/v1/images/generations';
export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';
/** A sync call takes this many steps. */
const SYNC_STEPS = 2;

const ImagesBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1),
  n: z.number().int().min(1).max(128).optional(),
  size: z.string().optional(),
  image: z.union([z.string(), z.array(z.string())]).optional(),
  images: z.array(z.string()).optional(),
  response_format: z.enum(['url', 'b64_json']).optional(),
  stream: z.boolean().optional(),
});

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const ChatBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(ContentPart), z.null()]).optional() })).min(1),
  n: z.number().int().min(1).max(128).optional(),
  size: z.string().optional(),
  stream: z.boolean().optional(),
});
type ChatBody = z.infer<typeof ChatBody>;

/** A sync result's files: `n` PNGs of `w`×`h`, made at `t`, with a nonce `z` for distinct colours. */
const SyncFilePayload = z.object({
  f: z.literal('simg'),
  w: z.number().int().min(1),
  h: z.number().int().min(1),
  n: z.number().int().min(1),
  t: z.number(),
  z: z.string(),
});
type SyncFilePayload = z.infer<typeof SyncFilePayload>;

type Generated = { fileId: string; payload: SyncFilePayload; count: number };

/** Refuses by marker, waits the sync latency, then fails or mints the result files. */
async function generate(markers: SimMarkers, n: number, size: PixelSize, ctx: SimContext): Promise<Generated> {
  refuseByMarkers(markers);
  const delay = ctx.stepMs * SYNC_STEPS * (markers.slow ? SLOW_FACTOR : 1);
  if (delay > 0) await sleep(delay);
  if (markers.fail) throw new SimHttpError(500, 'upstream_failed', 'simulated generation failure ([sim:fail])');
  const count = resultCount(n, markers);
  const payload: SyncFilePayload = { f: 'simg', w: size.width, h: size.height, n: count, t: ctx.now(), z: randomBytes(4).toString('hex') };
  return { fileId: ctx.codec.encode(payload), payload, count };
}

/** Rough token counts: 4 characters a text token, one output token per 32×32 pixels. */
const textTokens = (text: string): number => Math.ceil(text.length / 4);
const IMAGE_INPUT_TOKENS = 256;
const imageTokens = (size: PixelSize): number => Math.ceil((size.width * size.height) / 1024);

function referenceCount(image: string | string[] | undefined, images: string[] | undefined): number {
  if (images && images.length > 0) return images.length;
  if (Array.isArray(image)) return image.length;
  return image ? 1 : 0;
}

/** The prompt is the text of the last user message (string content, or its `text` parts). */
function chatPrompt(body: ChatBody): { text: string; images: number } {
  const user = [...body.messages].reverse().find((m) => m.role === 'user') ?? body.messages[body.messages.length - 1];
  const content = user?.content;
  if (typeof content === 'string') return { text: content, images: 0 };
  const parts = content ?? [];
  return {
    text: parts.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).filter(Boolean).join('\n'),
    images: parts.filter((p) => p.type === 'image_url').length,
  };
}

function refuseStreaming(stream: boolean | undefined): void {
  if (stream === true) throw new SimHttpError(400, 'invalid_request', 'stream: streaming is not simulated');
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(SYNC_IMAGES_PATH, async (request) => {
    const body = parseWith(ImagesBody, request.body);
    refuseStreaming(body.stream);
    const size = parseImageSize(body.size);
    const markers = requestMarkers(request, [body.prompt]);
    const { fileId, payload, count } = await generate(markers, body.n ?? 1, size, ctx);
    const kind = imageResultKind(body.model, body.response_format);
    const revised = stripMarkers(body.prompt);
    const origin = requestOrigin(request);
    const data = Array.from({ length: count }, (_, i) =>
      kind === 'b64'
        ? { b64_json: makePng(size.width, size.height, `${fileId}:${i}`).toString('base64'), revised_prompt: revised }
        : { url: fileUrl(origin, ctx.prefix, fileId, imagePngName(i)), revised_prompt: revised },
    );
    const text = textTokens(body.prompt);
    const image = referenceCount(body.image, body.images) * IMAGE_INPUT_TOKENS;
    const output = count * imageTokens(size);
    return {
      created: toUnixSeconds(payload.t),
      data,
      usage: {
        total_tokens: text + image + output,
        input_tokens: text + image,
        output_tokens: output,
        input_tokens_details: { text_tokens: text, image_tokens: image },
      },
    };
  });

  app.post(CHAT_COMPLETIONS_PATH, async (request) => {
    const body = parseWith(ChatBody, request.body);
    refuseStreaming(body.stream);
    const prompt = chatPrompt(body);
    if (prompt.text.trim() === '') throw new SimHttpError(400, 'invalid_request', 'messages: the user message carries no prompt text');
    const size = parseImageSize(body.size);
    const markers = requestMarkers(request, [prompt.text]);
    const { fileId, payload, count } = await generate(markers, body.n ?? 1, size, ctx);
    const origin = requestOrigin(request);
    const content = Array.from({ length: count }, (_, i) => `![image](${fileUrl(origin, ctx.prefix, fileId, imagePngName(i))})`).join('\n\n');
    const promptTokens = textTokens(prompt.text) + prompt.images * IMAGE_INPUT_TOKENS;
    const completionTokens = count * imageTokens(size);
    return {
      id: `chatcmpl-sim-${randomBytes(8).toString('hex')}`,
      object: 'chat.completion',
      created: toUnixSeconds(payload.t),
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    };
  });
}

/** `<index>.png` of a sync result, until the retention period after it was made ends. */
function file(id: string, name: string, ctx: SimContext): SimFile | undefined {
  const payload = ctx.codec.decode(id, SyncFilePayload);
  const index = parsePngName(name);
  if (!payload || index === undefined || index >= payload.n) return undefined;
  if (ctx.now() >= payload.t + ctx.assetRetentionMs) return undefined;
  return { contentType: 'image/png', body: makePng(payload.w, payload.h, `${id}:${index}`) };
}

export const syncImagesFamily: SimFamily = { name: 'images-sync', routes, file };
