/** The asset store of a simulation: bytes in a map (no files), the port's contract otherwise. */
import { Readable } from 'node:stream';
import { AssetTooLargeError, type AssetStore, type StoredAsset } from '../src/ports/asset-store.js';

export function memoryAssetStore(): AssetStore & { size(): number } {
  const assets = new Map<string, StoredAsset & { bytes: Buffer }>();
  const put = (key: string, bytes: Buffer, contentType: string): StoredAsset => {
    const stored = { key, contentType, size: bytes.length };
    assets.set(key, { ...stored, bytes });
    return stored;
  };
  return {
    put: async (key, bytes, contentType) => put(key, bytes, contentType),
    async putStream(key, source, contentType, options) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of source) {
        size += chunk.length;
        if (options?.maxBytes !== undefined && size > options.maxBytes) throw new AssetTooLargeError(key, options.maxBytes);
        chunks.push(Buffer.from(chunk));
      }
      return put(key, Buffer.concat(chunks), contentType);
    },
    get: async (key) => assets.get(key),
    async stat(key) {
      const a = assets.get(key);
      return a ? { key: a.key, contentType: a.contentType, size: a.size } : undefined;
    },
    async openRead(key, range) {
      const a = assets.get(key);
      if (!a) return undefined;
      const bytes = range ? a.bytes.subarray(range.start, range.end + 1) : a.bytes;
      return { key: a.key, contentType: a.contentType, size: a.size, body: Readable.from([bytes]) };
    },
    delete: async (key) => void assets.delete(key),
    ping: async () => undefined,
    close: async () => undefined,
    size: () => assets.size,
  };
}
