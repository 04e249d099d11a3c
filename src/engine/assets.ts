/**
 * Result files: re-hosted from the upstream (downloaded or decoded) into the AssetStore and
 * served by the gateway at signed URLs that expire with the task's assets.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskResultItem } from '../domain/events.js';
import type { AssetStore } from '../ports/asset-store.js';
import type { UpstreamResult } from './upstream.js';

/** Largest result file the gateway downloads to re-host. */
export const MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024;

export interface AssetSigner {
  url(key: string, expiresAt: number): string;
  verify(key: string, expiresAt: number, signature: string): boolean;
}

/** The signing secret: configured (shared by instances) or generated once into DATA_DIR. */
export function loadSigningSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const path = join(dataDir, 'asset-signing.key');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(path, secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

export function createAssetSigner(secret: string, publicBaseUrl: () => string): AssetSigner {
  const sign = (key: string, exp: number) => createHmac('sha256', secret).update(`${key}\n${exp}`).digest('base64url').slice(0, 32);
  return {
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
 * Stores every result's bytes under `tasks/<taskId>/<index>.<ext>` and returns the items for
 * TaskSucceeded. `delivery: 'url'` items carry a signed gateway URL; `b64` items only the key
 * (the query view inlines the bytes).
 */
export async function rehostResults(
  deps: {
    assets: AssetStore;
    signer: AssetSigner;
    resolveUrl: (url: string) => string;
    /** Downloads through the outbound URL guard (engine/outbound-guard.ts). */
    fetchBytes: (url: string) => Promise<{ bytes: Buffer; contentType: string | undefined }>;
  },
  taskId: string,
  results: readonly UpstreamResult[],
  delivery: 'url' | 'b64',
  expiresAt: number,
): Promise<TaskResultItem[]> {
  return Promise.all(
    results.map(async (r, index): Promise<TaskResultItem> => {
      const base: TaskResultItem = {
        kind: r.kind,
        ...(r.revisedPrompt !== undefined ? { revisedPrompt: r.revisedPrompt } : {}),
        ...(r.durationSeconds !== undefined ? { durationSeconds: r.durationSeconds } : {}),
      };
      if (r.kind === 'text' && r.text !== undefined && !r.url && !r.b64) return { ...base, text: r.text };
      const fetched = r.b64 !== undefined ? { bytes: Buffer.from(r.b64, 'base64'), contentType: r.contentType } : await deps.fetchBytes(deps.resolveUrl(r.url ?? ''));
      const contentType = sniffContentType(fetched.bytes, r.contentType ?? fetched.contentType ?? 'application/octet-stream');
      const key = `tasks/${taskId}/${index}.${extensionOf[contentType] ?? 'bin'}`;
      await deps.assets.put(key, fetched.bytes, contentType);
      return { ...base, assetKey: key, contentType, ...(delivery === 'url' ? { url: deps.signer.url(key, expiresAt) } : {}) };
    }),
  );
}
