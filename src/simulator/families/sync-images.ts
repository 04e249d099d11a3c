/**
 * Synchronous image upstream (spec 4.5 / 4.6, shapes of 2.2), answering after two steps:
 *   POST {prefix}/v1/images/generations   images-style `{created, data, usage}`
 *   POST {prefix}/v1/chat/completions     chat-style object whose content is a Markdown image link
 * URL results point at `{prefix}/files/<file id>/<index>.png`, where the file id is a signed
 * `simg` payload (size, count, time), so the files stay servable without any state.
 * `stream: true` answers server-sent events (sync-stream.ts); picgen models on the images path
 * are answered by picgen-sync.ts. `[sim:private-url]` / `[sim:broken-url]` make URL results
 * unfetchable (a redirect to the metadata address, a 404) for the gateway's outbound guard.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from '../context.js';
import { parseWith, plainErrorBody, requestMarkers, requestOrigin, requireBearer, SimHttpError, useSimErrorShape } from '../http.js';
import { imageResultKind, parsePngName } from '../image-results.js';
import { parseImageSize } from '../image-size.js';
import { stripMarkers } from '../markers.js';
import { makePng } from '../media.js';
import { toUnixSeconds } from '../timeline.js';
import { ChatBody, chatPrompt, generate, IMAGE_INPUT_TOKENS, imageTokens, resultFileUrl, SyncFilePayload, textTokens } from '../sync-common.js';
import { streamChat, streamImages } from '../sync-stream.js';

export const SYNC_IMAGES_PATH = '/v1/images/generations';
export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';

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

function referenceCount(image: string | string[] | undefined, images: string[] | undefined): number {
  if (images && images.length > 0) return images.length;
  if (Array.isArray(image)) return image.length;
  return image ? 1 : 0;
}

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(SYNC_IMAGES_PATH, async (request, reply) => {
    // Other families' models on this shared path (the synchronous picgen models).
    const other = ctx.imageGenerators.find((g) => g.handles(request.body));
    if (other) return other.generate(request, ctx);
    const body = parseWith(ImagesBody, request.body);
    const size = parseImageSize(body.size);
    const markers = requestMarkers(request, [body.prompt]);
    const references = referenceCount(body.image, body.images);
    if (body.stream === true) return streamImages(request, reply, { prompt: body.prompt, n: body.n ?? 1, size, references, markers }, ctx);
    const { fileId, payload, count } = await generate(markers, body.n ?? 1, size, ctx);
    const kind = imageResultKind(body.model, body.response_format);
    const revised = stripMarkers(body.prompt);
    const origin = requestOrigin(request);
    const data = Array.from({ length: count }, (_, i) =>
      kind === 'b64'
        ? { b64_json: makePng(size.width, size.height, `${fileId}:${i}`).toString('base64'), revised_prompt: revised }
        : { url: resultFileUrl(origin, ctx, fileId, i, [body.prompt]), revised_prompt: revised },
    );
    const text = textTokens(body.prompt);
    const image = references * IMAGE_INPUT_TOKENS;
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

  app.post(CHAT_COMPLETIONS_PATH, async (request, reply) => {
    const body = parseWith(ChatBody, request.body);
    const prompt = chatPrompt(body);
    if (prompt.text.trim() === '') throw new SimHttpError(400, 'invalid_request', 'messages: the user message carries no prompt text');
    const size = parseImageSize(body.size);
    const markers = requestMarkers(request, [prompt.text]);
    if (body.stream === true) return streamChat(request, reply, { body, prompt, size, markers }, ctx);
    const { fileId, payload, count } = await generate(markers, body.n ?? 1, size, ctx);
    const origin = requestOrigin(request);
    const content = Array.from({ length: count }, (_, i) => `![image](${resultFileUrl(origin, ctx, fileId, i, [prompt.text])})`).join('\n\n');
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

export const syncImagesSimFamily: SimFamily = { name: 'images-sync', routes, file };
