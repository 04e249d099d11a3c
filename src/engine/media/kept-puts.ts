/**
 * The asset store as one synchronous call's re-hosting sees it: what it puts whole (a Base64
 * result, decoded) is also kept in memory until the call is answered, so that a `b64_json`
 * answer does not read those bytes back from the store it just wrote them to (an open, a stat,
 * two reads and a close per image: about a tenth of the api process's time under 32 connections
 * of synchronous images). The answer is still rendered from the record (sync-record.ts): the
 * record names the keys, these are the bytes under them.
 */
import type { AssetStore } from '../../ports/asset-store.js';

export function keepingPuts(assets: AssetStore, kept: Map<string, Buffer>): AssetStore {
  return {
    async put(key, bytes, contentType) {
      const stored = await assets.put(key, bytes, contentType);
      kept.set(key, bytes);
      return stored;
    },
    putStream: (key, source, contentType, options) => assets.putStream(key, source, contentType, options),
    get: (key) => assets.get(key),
    stat: (key) => assets.stat(key),
    openRead: (key, range) => assets.openRead(key, range),
    delete(key) {
      kept.delete(key);
      return assets.delete(key);
    },
    ping: () => assets.ping(),
    close: () => assets.close(),
  };
}
