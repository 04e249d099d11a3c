/**
 * The synchronous picgen upstream call (the family's own public interface, spec 4.7 / 4.8):
 * JSON to `{base}/v1/images/generations` or `{base}/v1/images/edits` (multipart files already
 * turned into data URIs), answered `{created, data:[{url | b64_json}], usage?}`. URL images
 * are downloaded through the outbound guard; one that cannot be fetched keeps its upstream
 * URL (spec 4.7, `response_format`). Settlement charges every image the upstream returned.
 */
import type { SyncCallResult } from '../../engine/tasks/sync-task.js';
import { resultLimitOf } from '../../engine/media/assets.js';
import { UpstreamError, type UpstreamContext } from '../../engine/channels/upstream.js';
import type { GatewayDeps } from '../../http/deps.js';
import { isPlainObject } from '../kit/fields.js';
import { postSubmit } from '../kit/upstream.js';
import { fetchImages, itemsOf, SYNC_UPSTREAM_TIMEOUT_MS, type ImageSlot } from '../kit/sync-results.js';

export const PICGEN_GENERATIONS_PATH = '/v1/images/generations';
export const PICGEN_EDITS_PATH = '/v1/images/edits';

export type PicgenCallResult = SyncCallResult & { slots: ImageSlot[] };

export async function callPicgen(deps: GatewayDeps, ctx: UpstreamContext, path: string, upstream: Record<string, unknown>): Promise<PicgenCallResult> {
  const answered = await postSubmit(
    ctx,
    ctx.baseUrl + path,
    { ...upstream, model: ctx.upstreamModel },
    { what: 'picgen', timeoutMs: SYNC_UPSTREAM_TIMEOUT_MS },
  );
  const images = itemsOf(answered);
  if (images.length === 0) throw new UpstreamError('picgen: the upstream answered without an image', false, 502);
  // Images beyond those asked for (`max_images`) are neither fetched nor charged.
  const { results, slots } = await fetchImages(deps, ctx, images.slice(0, resultLimitOf(ctx.task.basis)), 'keep-url');
  const answer = isPlainObject(answered) ? answered : {};
  const unhosted = slots.filter((s): s is Extract<ImageSlot, { url: string }> => 'url' in s);
  return {
    results,
    slots,
    usage: { units: images.length },
    snapshot: { created: answer.created, usage: answer.usage, ...(unhosted.length > 0 ? { unhosted } : {}) },
  };
}
