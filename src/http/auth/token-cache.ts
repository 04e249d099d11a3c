/**
 * Bearer tokens by key hash, read from the tokens view and kept in memory; a commit to the
 * tokens view drops the cached entries it touched, so a disabled or deleted token stops at once.
 */
import type { ViewStore } from '../../ports/view-store.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import type { ProjectionRunner } from '../../../projections/runner.js';

export interface TokenCache {
  byKeyHash(keyHash: string): Promise<TokenDoc | undefined>;
  close(): void;
}

export function createTokenCache(views: ViewStore, runner: ProjectionRunner, maxEntries = 50_000): TokenCache {
  const cache = new Map<string, TokenDoc | null>();
  const hashOfToken = new Map<string, string>();
  const unsubscribe = runner.onCommit((writes) => {
    for (const w of writes) {
      if (w.view !== 'tokens') continue;
      // Drop what is cached for this token (and a cached miss of a new key): the next
      // lookup reloads the current document.
      const known = hashOfToken.get(w.id);
      if (known) cache.delete(known);
      const doc = w.doc as TokenDoc | null;
      if (doc) cache.delete(doc.keyHash);
    }
  });
  return {
    async byKeyHash(keyHash) {
      const hit = cache.get(keyHash);
      if (hit !== undefined) return hit ?? undefined;
      const [found] = await views.find<TokenDoc>('tokens', { keyHash }, { limit: 1 });
      if (cache.size >= maxEntries) {
        cache.clear();
        hashOfToken.clear();
      }
      cache.set(keyHash, found?.doc ?? null);
      if (found) hashOfToken.set(found.doc.tokenId, keyHash);
      return found?.doc;
    },
    close: () => unsubscribe(),
  };
}
