/**
 * Result files: re-hosted from the upstream (downloaded or decoded) into the AssetStore and
 * served by the gateway at signed URLs that expire with the task's assets. Re-hosting records
 * keys only; the URLs are signed when a view is read, by the instance that answers
 * (engine/media/sign-asset-refs.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFileOnce } from '../../lib/file-once.js';
import type { PriceBasis, TaskResultItem } from '../../domain/events.js';
import { AssetTooLargeError, type AssetStore } from '../../ports/asset-store.js';
import {
  DownloadStatusError,
  openGuardedDownload,
  originOf,
  OutboundRefusedError,
  type DownloadStream,
  type OutboundPolicy,
} from '../outbound/outbound-guard.js';
import type { UpstreamResult } from '../channels/upstream.js';

/** Largest result file the gateway downloads to re-host. */
export const MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024;

export interface AssetSigner {
  /** The public base URLs are signed on now (it is known only once the server listens). */
  base(): string;
  url(key: string, expiresAt: number): string;
  verify(key: string, expiresAt: number, signature: string): boolean;
}

/**
 * The signing secret: configured (shared by instances) or generated once into DATA_DIR. Two
 * processes starting on an empty DATA_DIR (PROCESSES=2) may race to make it: one file wins, and
 * both read that one, never half written (file-once.ts).
 */
export function loadSigningSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const path = join(dataDir, 'asset-signing.key');
  createFileOnce(path, randomBytes(32).toString('base64url'), 0o600);
  return readFileSync(path, 'utf8').trim();
}

export function createAssetSigner(secret: string, publicBaseUrl: () => string): AssetSigner {
  const sign = (key: string, exp: number) => createHmac('sha256', secret).update(`${key}\n${exp}`).digest('base64url').slice(0, 32);
  return {
    base: publicBaseUrl,
    url: (key, exp) => `${publicBaseUrl()}/assets/${key}?exp=${exp}&sig=${sign(key, exp)}`,
    verify(key, exp, signature) {
      const expected = Buffer.from(sign(key, exp));
      const given = Buffer.from(signature);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}

/** Content type from the bytes' signature, for upstreams that do not say. */
export function sniffContentType(bytes: Buffer, fallback: string): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WAVE') return 'audio/wav';
  if (bytes.subarray(4, 8).toString('latin1') === 'ftyp') return 'video/mp4';
  if (bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  return fallback;
}

const extensionOf: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'video/mp4': 'mp4',
  'text/plain': 'txt',
};

/**
 * How many results a task keeps. For a per-image price, the images asked for (`n`,
 * `max_images`: what the reservation's basis records); otherwise MAX_RESULTS_PER_TASK, more
 * than any family returns for one request (an art grid and its four images, two songs, one
 * video). An upstream that returns more is not paid for them (settlementOf), and the gateway
 * does not store them either.
 */
export function resultLimitOf(basis: Pick<PriceBasis, 'unit' | 'units'>): number {
  return basis.unit === 'image' ? Math.max(1, Math.ceil(basis.units)) : MAX_RESULTS_PER_TASK;
}

/** See resultLimitOf. */
export const MAX_RESULTS_PER_TASK = 16;

/** Bytes read before the content type is sniffed (the longest signature is 12 bytes). */
const SNIFF_BYTES = 16;

export interface RehostDeps {
  assets: AssetStore;
  resolveUrl: (url: string) => string;
  /** Opens a download through the outbound URL guard (engine/outbound/outbound-guard.ts). */
  download: (url: string, result: UpstreamResult) => Promise<DownloadStream>;
  /** Largest result file stored; enforced while the bytes stream in. */
  maxBytes: number;
}

/**
 * Re-hosting for one channel's results: relative URLs on the channel's origin, downloads under
 * `policy` until `signal` (the task's deadline), and the channel key only for results that ask
 * for it and only on the channel's own origin.
 */
export function channelRehostDeps(
  stores: { assets: AssetStore },
  channel: { key: string; baseUrl: string },
  policy: OutboundPolicy,
  signal: AbortSignal,
): RehostDeps {
  const origin = new URL(channel.baseUrl).origin;
  const keyFor = (url: string, result: UpstreamResult) =>
    result.withChannelKey && originOf(url) === origin ? { headers: { authorization: `Bearer ${channel.key}` } } : {};
  return {
    assets: stores.assets,
    resolveUrl: (u) => (u.startsWith('/') ? origin + u : u),
    download: (url, result) => openGuardedDownload(url, policy, { signal, ...keyFor(url, result) }),
    maxBytes: policy.maxBytes,
  };
}

/**
 * Stores every result's bytes under `tasks/<taskId>/<index>.<ext>` and returns the items for
 * TaskSucceeded. Downloads stream into the asset store (never held whole); a file that fails
 * or passes `maxBytes` midway is never visible, and when any result fails the ones already
 * stored are deleted again. Items carry the asset key and how it is delivered, never a URL:
 * `url` items are signed by whoever reads them (on its own public base), `b64` items inlined
 * by the query view. Results past `limit` are dropped unread.
 */
export async function rehostResults(
  deps: RehostDeps,
  taskId: string,
  results: readonly UpstreamResult[],
  delivery: 'url' | 'b64',
  limit: number = MAX_RESULTS_PER_TASK,
): Promise<TaskResultItem[]> {
  const kept = results.slice(0, limit);
  const settled = await Promise.allSettled(kept.map((r, index) => rehostOne(deps, taskId, r, index, delivery)));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failure) return settled.map((s) => (s as PromiseFulfilledResult<TaskResultItem>).value);
  const stored = settled.flatMap((s) => (s.status === 'fulfilled' && s.value.assetKey ? [s.value.assetKey] : []));
  await Promise.allSettled(stored.map((key) => deps.assets.delete(key)));
  throw failure.reason;
}

async function rehostOne(deps: RehostDeps, taskId: string, r: UpstreamResult, index: number, delivery: 'url' | 'b64'): Promise<TaskResultItem> {
  const base: TaskResultItem = {
    kind: r.kind,
    ...(r.revisedPrompt !== undefined ? { revisedPrompt: r.revisedPrompt } : {}),
    ...(r.durationSeconds !== undefined ? { durationSeconds: r.durationSeconds } : {}),
  };
  if (r.kind === 'text' && r.text !== undefined && !r.url && !r.b64) return { ...base, text: r.text };
  const keyOf = (contentType: string) => `tasks/${taskId}/${index}.${extensionOf[contentType] ?? 'bin'}`;
  const item = (key: string, contentType: string): TaskResultItem => ({ ...base, assetKey: key, contentType, delivery });
  if (r.b64 !== undefined) {
    const bytes = Buffer.from(r.b64, 'base64');
    if (bytes.length > deps.maxBytes) throw new AssetTooLargeError(keyOf('application/octet-stream'), deps.maxBytes);
    const contentType = sniffContentType(bytes, r.contentType ?? 'application/octet-stream');
    await deps.assets.put(keyOf(contentType), bytes, contentType);
    return item(keyOf(contentType), contentType);
  }
  const download = await deps.download(deps.resolveUrl(r.url ?? ''), r);
  try {
    const chunks = download.body[Symbol.asyncIterator]();
    const head = await readHead(chunks, SNIFF_BYTES);
    const contentType = sniffContentType(Buffer.concat(head), r.contentType ?? download.contentType ?? 'application/octet-stream');
    const key = keyOf(contentType);
    await deps.assets.putStream(key, replay(head, chunks), contentType, { maxBytes: deps.maxBytes });
    return item(key, contentType);
  } finally {
    // Whatever was not read (a refused key, a failed store) must not hold the connection.
    download.abort();
  }
}

/** The first chunks of a stream, until they hold at least `bytes` bytes or the stream ends. */
async function readHead(chunks: AsyncIterator<Buffer>, bytes: number): Promise<Buffer[]> {
  const head: Buffer[] = [];
  let size = 0;
  while (size < bytes) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    size += next.value.length;
  }
  return head;
}

/** The chunks already read, then the rest of the stream. */
async function* replay(head: readonly Buffer[], rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * Failures of re-hosting that another try will not mend: a URL the guard refuses (a private
 * address, too many redirects), a file over the size limit, a 4xx answer. Others (a timeout,
 * a 5xx, a broken connection) may pass on the next try.
 */
export function isPermanentRehostFailure(err: unknown): boolean {
  if (err instanceof OutboundRefusedError || err instanceof AssetTooLargeError) return true;
  return err instanceof DownloadStatusError && err.status >= 400 && err.status < 500;
}
