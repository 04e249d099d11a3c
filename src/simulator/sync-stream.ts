/**
 * `stream: true` on the simulated synchronous image upstream (spec 6.1): server-sent events.
 * - images: per image one `image_generation.partial_image` (a small preview) half-way, then
 *   `image_generation.completed` with the full `b64_json` and that image's token usage (the
 *   first image carries the input tokens, so the usages add up to the call's);
 * - chat: chat-completion chunks (role, content with Markdown links, finish with usage), `[DONE]`.
 * Marker refusals (`[sim:reject]`, `[sim:5xx]`) answer before the stream starts; `[sim:fail]`
 * sends an error frame after the partial images.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SimContext } from './context.js';
import { refuseByMarkers, requestOrigin } from './http.js';
import type { PixelSize } from './image-size.js';
import { resultCount, type SimMarkers } from './markers.js';
import { makePng } from './media.js';
import { type ChatBody, IMAGE_INPUT_TOKENS, imageTokens, mintFiles, resultFileUrl, syncDelayMs, textTokens } from './sync-common.js';
import { toUnixSeconds } from './timeline.js';

const PREVIEW_DIVISOR = 8;
const FAILURE = { code: 'upstream_failed', message: 'simulated generation failure ([sim:fail])' };

function open(reply: FastifyReply): (frame: string) => void {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  return (frame) => {
    if (!reply.raw.destroyed && !reply.raw.writableEnded) reply.raw.write(frame);
  };
}

const frame = (data: unknown, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

export type StreamImagesInput = { prompt: string; n: number; size: PixelSize; references: number; markers: SimMarkers };

export async function streamImages(_request: FastifyRequest, reply: FastifyReply, input: StreamImagesInput, ctx: SimContext): Promise<FastifyReply> {
  const { markers, size } = input;
  refuseByMarkers(markers);
  const write = open(reply);
  const delay = syncDelayMs(markers, ctx);
  const count = resultCount(input.n, markers);
  const echo = { size: `${size.width}x${size.height}`, quality: 'auto', background: 'auto', output_format: 'png' };
  const seed = randomBytes(4).toString('hex');
  if (delay > 0) await sleep(delay / 2);
  for (let i = 0; i < count; i++) {
    const preview = makePng(Math.max(1, Math.round(size.width / PREVIEW_DIVISOR)), Math.max(1, Math.round(size.height / PREVIEW_DIVISOR)), `${seed}:${i}`);
    const type = 'image_generation.partial_image';
    write(frame({ type, b64_json: preview.toString('base64'), created_at: toUnixSeconds(ctx.now()), partial_image_index: 0, ...echo }, type));
  }
  if (delay > 0) await sleep(delay / 2);
  if (markers.fail) {
    write(frame({ type: 'error', error: FAILURE }, 'error'));
    reply.raw.end();
    return reply;
  }
  const text = textTokens(input.prompt);
  const image = input.references * IMAGE_INPUT_TOKENS;
  const output = imageTokens(size);
  for (let i = 0; i < count; i++) {
    const input_tokens = i === 0 ? text + image : 0;
    const usage = {
      total_tokens: input_tokens + output,
      input_tokens,
      output_tokens: output,
      input_tokens_details: { text_tokens: i === 0 ? text : 0, image_tokens: i === 0 ? image : 0 },
    };
    const type = 'image_generation.completed';
    write(
      frame(
        { type, b64_json: makePng(size.width, size.height, `${seed}:${i}`).toString('base64'), created_at: toUnixSeconds(ctx.now()), ...echo, usage },
        type,
      ),
    );
  }
  reply.raw.end();
  return reply;
}

export type StreamChatInput = { body: ChatBody; prompt: { text: string; images: number }; size: PixelSize; markers: SimMarkers };

export async function streamChat(request: FastifyRequest, reply: FastifyReply, input: StreamChatInput, ctx: SimContext): Promise<FastifyReply> {
  const { markers, size, body } = input;
  refuseByMarkers(markers);
  const write = open(reply);
  const base = { id: `chatcmpl-sim-${randomBytes(8).toString('hex')}`, object: 'chat.completion.chunk', created: toUnixSeconds(ctx.now()), model: body.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>) =>
    frame({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) });
  write(chunk({ role: 'assistant', content: '' }, null));
  const delay = syncDelayMs(markers, ctx);
  if (delay > 0) await sleep(delay);
  if (markers.fail) {
    write(frame({ error: FAILURE }));
    reply.raw.end();
    return reply;
  }
  const { fileId, count } = mintFiles(resultCount(body.n ?? 1, markers), size, ctx);
  const origin = requestOrigin(request);
  const content = Array.from({ length: count }, (_, i) => `![image](${resultFileUrl(origin, ctx, fileId, i, [input.prompt.text])})`).join('\n\n');
  const prompt_tokens = textTokens(input.prompt.text) + input.prompt.images * IMAGE_INPUT_TOKENS;
  const completion_tokens = count * imageTokens(size);
  write(chunk({ content }, null));
  write(chunk({}, 'stop', { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens }));
  write('data: [DONE]\n\n');
  reply.raw.end();
  return reply;
}
