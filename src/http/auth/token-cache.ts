/**
 * Bearer tokens by key hash, and their users' status, read from the tokens and users views and
 * kept in memory; a commit to either view drops the cached entries it touched, so a disabled or
 * deleted token, or a disabled or deleted user, stops at once.
 */
import type { ViewStore } from '../../ports/view-store.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import { userStatusOf, type UserDoc } from '../../../projections/users.js';
import type { UserStatus } from '../../domain/user.js';
import type { ProjectionRunner } from '../../../projections/runner.js';
import { VIEWS } from '../../../projections/views.js';

export interface TokenCache {
  byKeyHash(keyHash: string): Promise<TokenDoc | undefined>;
  /** The status of a token's user; `deleted` for a user the view does not hold. */
  userStatus(userId: string): Promise<UserStatus>;
  close(): void;
}

/**
 * `ttlMs`: how long an entry is trusted where no projection commits are seen (processes that
 * do not run the projections); by default entries live until a commit touches their token.
 */
export function createTokenCache(views: ViewStore, runner: ProjectionRunner, options: { maxEntries?: number; ttlMs?: number } = {}): TokenCache {
  const maxEntries = options.maxEntries ?? 50_000;
  const cache = new Map<string, TokenDoc | null>();
  const loadedAt = new Map<string, number>();
  const hashOfToken = new Map<string, string>();
  const users = new Map<string, { status: UserStatus; loadedAt: number }>();
  const unsubscribe = runner.onCommit((writes) => {
    for (const w of writes) {
      if (w.view === VIEWS.users) users.delete(w.id);
      if (w.view !== VIEWS.tokens) continue;
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
      const fresh = options.ttlMs === undefined || Date.now() - (loadedAt.get(keyHash) ?? 0) < options.ttlMs;
      if (hit !== undefined && fresh) return hit ?? undefined;
      const [found] = await views.find<TokenDoc>(VIEWS.tokens, { keyHash }, { limit: 1 });
      if (cache.size >= maxEntries) {
        cache.clear();
        hashOfToken.clear();
        loadedAt.clear();
      }
      cache.set(keyHash, found?.doc ?? null);
      if (options.ttlMs !== undefined) loadedAt.set(keyHash, Date.now());
      if (found) hashOfToken.set(found.doc.tokenId, keyHash);
      return found?.doc;
    },
    async userStatus(userId) {
      const hit = users.get(userId);
      if (hit && (options.ttlMs === undefined || Date.now() - hit.loadedAt < options.ttlMs)) return hit.status;
      const found = await views.get<UserDoc>(VIEWS.users, userId);
      const status = found ? userStatusOf(found.doc) : 'deleted';
      if (users.size >= maxEntries) users.clear();
      users.set(userId, { status, loadedAt: Date.now() });
      return status;
    },
    close: () => unsubscribe(),
  };
}
