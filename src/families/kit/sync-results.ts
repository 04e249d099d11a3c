/**
 * Result images of the synchronous image families, through the one outbound guard
 * (src/engine/outbound/outbound-guard.ts): upstream result URLs are downloaded here, so the engine's
 * re-hosting only stores bytes. (Reference URLs are checked at submit by the URL policy,
 * src/families/kit/url-policy.ts.)
 */
import { outboundPolicy, guardedDownload } from '../../engine/outbound/outbound-guard.js';
import { UpstreamError, type UpstreamContext, type UpstreamResult } from '../../engine/channels/upstream.js';
import type { GatewayDeps } from '../../http/deps.js';
import { isPlainObject } from './fields.js';

/** Longest a synchronous upstream call may take (generation included). */
export const SYNC_UPSTREAM_TIMEOUT_MS = 300_000;
/** Largest result image downloaded. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

export interface UpstreamImage {
  url?: string;
  b64?: string;
  revisedPrompt?: string;
}

/** Where each upstream image ended up: a result to re-host, or a URL the gateway could not fetch. */
export type ImageSlot = { result: number } | { url: string; reason: string };

export interface FetchedImages {
  results: UpstreamResult[];
  slots: ImageSlot[];
}

function absolute(url: string, baseUrl: string): string {
  return url.startsWith('/') ? new URL(baseUrl).origin + url : url;
}

/**
 * Downloads every URL image through the guard. `onFailure: 'fail'` makes a failed download a
 * final upstream error; `'keep-url'` keeps the upstream URL for the client (picgen, spec 4.7).
 */
export async function fetchImages(
  deps: GatewayDeps,
  ctx: UpstreamContext,
  images: readonly UpstreamImage[],
  onFailure: 'fail' | 'keep-url',
): Promise<FetchedImages> {
  // Result downloads trust the gateway itself and the channel's own origin; redirects away are checked.
  const policy = outboundPolicy(deps.config, deps.selfUrl(), [ctx.baseUrl], { maxBytes: MAX_RESULT_BYTES });
  const fetched = await Promise.all(
    images.map(async (image): Promise<UpstreamResult | { url: string; reason: string }> => {
      const base = { kind: 'image' as const, ...(image.revisedPrompt !== undefined ? { revisedPrompt: image.revisedPrompt } : {}) };
      if (image.b64 !== undefined) return { ...base, b64: image.b64 };
      const url = absolute(image.url ?? '', ctx.baseUrl);
      try {
        const file = await guardedDownload(url, policy);
        return { ...base, b64: file.bytes.toString('base64'), ...(file.contentType ? { contentType: file.contentType } : {}) };
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        if (onFailure === 'fail') throw new UpstreamError(`the result image could not be fetched: ${reason}`, false, 502);
        return { url, reason };
      }
    }),
  );
  const results: UpstreamResult[] = [];
  const slots: ImageSlot[] = fetched.map((item) => {
    if ('kind' in item) {
      results.push(item);
      return { result: results.length - 1 };
    }
    return item;
  });
  return { results, slots };
}

/** A string the upstream answered; undefined for anything else. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The images of an OpenAI-style images answer (`data[]` with `b64_json` or `url`). */
export function itemsOf(body: unknown): UpstreamImage[] {
  const data = isPlainObject(body) && Array.isArray(body.data) ? body.data : [];
  return data.filter(isPlainObject).flatMap((item): UpstreamImage[] => {
    const revised = str(item.revised_prompt);
    const extra = revised !== undefined ? { revisedPrompt: revised } : {};
    const b64 = str(item.b64_json);
    const url = str(item.url);
    if (b64) return [{ b64, ...extra }];
    return url ? [{ url, ...extra }] : [];
  });
}
