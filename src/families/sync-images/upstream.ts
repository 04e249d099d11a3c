/**
 * Upstream calls of the synchronous std-image / pro-image endpoints (the upstream protocol is
 * the family's own public interface, spec 4.5 / 4.6): one POST per channel attempt, answered
 * with the images (downloaded through the outbound guard) and the count settlement charges.
 * Token usage stays in the task's `upstream` snapshot and is echoed to the client.
 */
import type { SyncCallResult } from '../../engine/tasks/sync-task.js';
import { resultLimitOf } from '../../engine/media/assets.js';
import { bodyChunks, failureOf, MAX_UPSTREAM_ANSWER_BYTES, openUpstream, readUpstreamReply, type OpenedUpstream } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamContext } from '../../engine/channels/upstream.js';
import type { GatewayDeps } from '../../http/deps.js';
import { isPlainObject } from '../kit/fields.js';
import { postSubmit } from '../kit/upstream.js';
import { fetchImages, itemsOf, str, SYNC_UPSTREAM_TIMEOUT_MS, type UpstreamImage } from '../kit/sync-results.js';
import { readSse } from './sse.js';

export const IMAGES_PATH = '/v1/images/generations';
export const CHAT_PATH = '/v1/chat/completions';

const MARKDOWN_IMAGE = /!\[[^\]]*\]\(\s*([^)\s]+)[^)]*\)/g;

/** Image links in a chat answer: URLs, or inline Base64 data URIs. */
export function markdownImages(content: string): UpstreamImage[] {
  return [...content.matchAll(MARKDOWN_IMAGE)].flatMap((m): UpstreamImage[] => {
    const target = m[1] ?? '';
    const inline = /^data:image\/[a-z0-9.+-]+;base64,(.+)$/.exec(target);
    if (inline?.[1]) return [{ b64: inline[1] }];
    return /^(https?:\/\/|\/)/.test(target) ? [{ url: target }] : [];
  });
}

function body(ctx: UpstreamContext, upstream: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...upstream, model: ctx.upstreamModel, ...extra };
}

export async function callImages(deps: GatewayDeps, ctx: UpstreamContext, upstream: Record<string, unknown>): Promise<SyncCallResult> {
  const answered = await postSubmit(ctx, ctx.baseUrl + IMAGES_PATH, body(ctx, upstream), { what: 'images', timeoutMs: SYNC_UPSTREAM_TIMEOUT_MS });
  const images = itemsOf(answered);
  if (images.length === 0) throw new UpstreamError('images: the upstream answered without an image', false, 502);
  // Images beyond those asked for are neither fetched nor charged (settlement caps the units).
  const { results } = await fetchImages(deps, ctx, images.slice(0, resultLimitOf(ctx.task.basis)), 'fail');
  const answer = isPlainObject(answered) ? answered : {};
  return { results, usage: { units: images.length }, snapshot: { created: answer.created, usage: answer.usage } };
}

export async function callChat(deps: GatewayDeps, ctx: UpstreamContext, upstream: Record<string, unknown>): Promise<SyncCallResult> {
  const answered = await postSubmit(ctx, ctx.baseUrl + CHAT_PATH, body(ctx, upstream), { what: 'chat', timeoutMs: SYNC_UPSTREAM_TIMEOUT_MS });
  const answer = isPlainObject(answered) ? answered : {};
  const choices = Array.isArray(answer.choices) ? answer.choices.filter(isPlainObject) : [];
  const text = choices.map((c) => (isPlainObject(c.message) ? (str(c.message.content) ?? '') : '')).join('\n\n');
  const found = markdownImages(text);
  const { results } = await fetchImages(deps, ctx, found.slice(0, resultLimitOf(ctx.task.basis)), 'fail');
  // An answer without images (a refusal, say) is passed on as text and charged nothing.
  const plain = results.length === 0 ? text : '';
  // The text is kept with the task: the answer is rendered from the record (sync-images/answers.ts).
  return { results, usage: { units: found.length }, snapshot: { id: answer.id, usage: answer.usage, ...(plain ? { text: plain } : {}) } };
}

/** Adds up numeric fields (nested objects too) of the per-image usages of a stream. */
export function sumUsage(list: readonly unknown[]): Record<string, unknown> {
  const total: Record<string, unknown> = {};
  for (const usage of list) {
    if (!isPlainObject(usage)) continue;
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === 'number') total[key] = (typeof total[key] === 'number' ? total[key] : 0) + value;
      else if (isPlainObject(value)) total[key] = sumUsage([total[key], value]);
    }
  }
  return total;
}

/** Opens the streamed call: an answer other than a 200 event stream is the upstream's failure (its body read within the limit). */
async function openStream(ctx: UpstreamContext, upstream: Record<string, unknown>): Promise<OpenedUpstream> {
  const opened = await openUpstream('POST', ctx.baseUrl + IMAGES_PATH, {
    key: ctx.channel.key,
    body: body(ctx, upstream, { stream: true }),
    accept: 'text/event-stream',
    timeoutMs: SYNC_UPSTREAM_TIMEOUT_MS,
    signal: ctx.signal,
    idempotencyKey: ctx.idempotencyKey,
  });
  if (opened.status !== 200) throw failureOf(await readUpstreamReply(opened), 'images stream');
  if (!(opened.header('content-type') ?? '').startsWith('text/event-stream')) {
    opened.discard();
    throw new UpstreamError('images stream: the upstream did not answer with text/event-stream', false, 502);
  }
  return opened;
}

/**
 * `stream: true` upstream: partial images go to `onPartial` as they come, completed images are
 * collected. A failure after a partial image was passed on is final (no failover mid-stream).
 */
export async function callImagesStream(
  deps: GatewayDeps,
  ctx: UpstreamContext,
  upstream: Record<string, unknown>,
  onPartial: (event: { b64_json: string; partial_image_index: number }) => void,
): Promise<SyncCallResult> {
  const opened = await openStream(ctx, upstream);
  const images: UpstreamImage[] = [];
  const usages: unknown[] = [];
  const limit = resultLimitOf(ctx.task.basis);
  let completed = 0;
  let passedOn = false;
  try {
    for await (const frame of readSse(bodyChunks(opened), MAX_UPSTREAM_ANSWER_BYTES)) {
      if (frame.data.startsWith('[DONE]')) break;
      const event: unknown = JSON.parse(frame.data);
      if (!isPlainObject(event)) continue;
      if (isPlainObject(event.error)) throw new UpstreamError(`images stream: ${str(event.error.message) ?? 'upstream error'}`, !passedOn, 502);
      const b64 = str(event.b64_json);
      if (event.type === 'image_generation.partial_image' && b64) {
        onPartial({ b64_json: b64, partial_image_index: typeof event.partial_image_index === 'number' ? event.partial_image_index : 0 });
        passedOn = true;
      } else if (event.type === 'image_generation.completed' && b64) {
        // Images beyond those asked for are counted (for the record), not kept.
        if (++completed > limit) continue;
        images.push({ b64 });
        usages.push(event.usage);
      }
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError(`images stream broke off: ${opened.why(err)}`, !passedOn, 502);
  }
  if (images.length === 0) throw new UpstreamError('images stream: ended without a completed image', !passedOn, 502);
  const { results } = await fetchImages(deps, ctx, images, 'fail');
  return { results, usage: { units: completed }, snapshot: { usage: sumUsage(usages), usages } };
}
