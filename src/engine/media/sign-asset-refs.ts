/**
 * The one place a task's view becomes an answer with URLs: every asset reference
 * (domain/asset-ref.ts) in the document is replaced by a URL signed on the public base of the
 * instance that answers — an API instance's query routes, a worker's callback bodies, a
 * synchronous call's answer. Views and events hold keys; only answers hold URLs.
 *
 * Only the task's own assets (`tasks/<taskId>/…`, where re-hosting stores them) are signed, so
 * text an upstream or a client put into a view can never obtain a URL to another task's files.
 * URLs that earlier versions stored in views are re-signed on this base when their signature
 * is the gateway's (the same secret on every instance), so an old task answers like a new one.
 */
import { parseAssetRef, parseSignedAssetUrl } from '../../domain/asset-ref.js';
import type { AssetSigner } from './assets.js';

export function signAssetRefs<T>(value: T, signer: AssetSigner, taskId: string): T {
  const own = `tasks/${taskId}/`;
  const signed = (text: string): string => {
    const ref = parseAssetRef(text);
    if (ref) return ref.key.startsWith(own) ? signer.url(ref.key, ref.expiresAt) : text;
    const legacy = parseSignedAssetUrl(text);
    if (legacy && legacy.key.startsWith(own) && signer.verify(legacy.key, legacy.expiresAt, legacy.signature)) return signer.url(legacy.key, legacy.expiresAt);
    return text;
  };
  const visit = (v: unknown): unknown => {
    if (typeof v === 'string') return signed(v);
    if (Array.isArray(v)) return v.map(visit);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, visit(x)]));
    return v;
  };
  return visit(value) as T;
}
