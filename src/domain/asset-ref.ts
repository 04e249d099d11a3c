/**
 * How views keep a result URL: a reference to the re-hosted asset (its key and when it
 * expires), never a signed URL. A signed URL's base depends on who answers (each API instance
 * has its own PUBLIC_BASE_URL, a worker delivering callbacks another), so the instance that
 * reads a view turns the references into URLs on its own base (engine/media/sign-asset-refs.ts).
 * The reference is a string so every view keeps its field types (`result_url: string`). Pure.
 */
import type { TaskResultItem } from './events.js';

export interface AssetRef {
  key: string;
  /** Unix seconds: the URL's `exp`. */
  expiresAt: number;
}

const PREFIX = 'asset-ref:';
const REF = /^asset-ref:(\d{1,15}):([A-Za-z0-9._/-]{1,1024})$/;

/** `asset-ref:<expiresAt>:<key>`. */
export function assetRef(key: string, expiresAt: number): string {
  return `${PREFIX}${expiresAt}:${key}`;
}

export function parseAssetRef(value: string): AssetRef | undefined {
  if (!value.startsWith(PREFIX)) return undefined;
  const match = REF.exec(value);
  return match ? { key: match[2]!, expiresAt: Number(match[1]) } : undefined;
}

/**
 * A gateway asset URL as earlier versions stored it in events and views:
 * `<base>/assets/<key>?exp=<n>&sig=<s>`. Whether the signature is the gateway's is for the
 * signer to say.
 */
export function parseSignedAssetUrl(value: string): (AssetRef & { signature: string }) | undefined {
  if (!value.includes('/assets/') || !value.includes('sig=')) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const at = url.pathname.indexOf('/assets/');
  const key = at < 0 ? '' : url.pathname.slice(at + '/assets/'.length);
  const exp = Number(url.searchParams.get('exp') ?? '');
  const signature = url.searchParams.get('sig') ?? '';
  if (!key || !signature || !Number.isSafeInteger(exp) || exp < 0) return undefined;
  return { key, expiresAt: exp, signature };
}

/** Whether a result reaches the client as a URL (else as Base64, or as text). */
export function deliveredAsUrl(item: TaskResultItem): boolean {
  return item.delivery !== undefined ? item.delivery === 'url' && item.assetKey !== undefined : item.url !== undefined;
}

/**
 * What a view keeps for a result delivered as a URL: its reference, on the key and the task's
 * `assetsExpireAt`; undefined for a result delivered otherwise. An event of an earlier version
 * carries the URL its re-hosting instance signed next to the key: the key is what counts (the
 * URL's own path when the key is missing), so an old task answers on the reader's base too. A
 * URL whose key cannot be read is kept as it was.
 */
export function resultUrlRef(item: TaskResultItem, assetsExpireAt: number): string | undefined {
  if (!deliveredAsUrl(item)) return undefined;
  const legacy = item.url !== undefined ? parseSignedAssetUrl(item.url) : undefined;
  const key = item.assetKey ?? legacy?.key;
  if (key === undefined) return item.url;
  return assetRef(key, assetsExpireAt || legacy?.expiresAt || 0);
}
