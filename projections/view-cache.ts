/**
 * Poll from memory: a ViewStore that answers `get` of the listed views (the task views polling
 * reads, engine/tasks/task-view.ts) from a bounded LRU of documents per view, kept current by the
 * commits that go through it — the projection runner's. Never stale:
 *
 * - a document enters the cache only as the store holds it (read on a miss) or as a commit
 *   wrote it, and every commit that writes (or deletes) a cached document replaces (or drops)
 *   it the moment the store has committed, before the runner tells any waiter;
 * - a miss whose store read overlapped a commit of that view does not cache what it read (it
 *   may predate the commit);
 * - absence is never cached: a miss always reads the store.
 *
 * So it may only wrap the store where this process's own runner commits the views (roles `all`
 * and `projector`); a process that only follows another's commits (`api`, `worker`) reads the
 * store (src/gateway.ts). `getMany`, `find` and `count` always read the store. Cached documents
 * are shared between readers, which must not change them (taskViewFor copies as it signs).
 */
import { LRUCache } from 'lru-cache';
import type { FindOptions, ViewDocument, ViewFieldValue, ViewStore, ViewWrite } from '../src/ports/view-store.js';

export interface ViewCacheStats {
  hits: number;
  misses: number;
  documents: number;
}

export interface CachedViewStore extends ViewStore {
  cacheStats(): ViewCacheStats;
}

/**
 * A cached view's document: from the cache, or read from the store and kept unless something
 * changed the cache (`changes()` moved) while the read ran, for it may predate that change.
 * Absence is never kept.
 */
export async function readThrough<T>(
  inner: ViewStore,
  cache: LRUCache<string, ViewDocument> | undefined,
  stats: { hits: number; misses: number },
  view: string,
  id: string,
  changes: () => number,
): Promise<ViewDocument<T> | undefined> {
  if (!cache) return inner.get<T>(view, id);
  const hit = cache.get(id);
  if (hit) {
    stats.hits++;
    return hit as ViewDocument<T>;
  }
  stats.misses++;
  const before = changes();
  const stored = await inner.get<T>(view, id);
  if (stored && changes() === before) cache.set(id, stored);
  return stored;
}

/** Documents kept per view. */
const DEFAULT_DOCUMENTS_PER_VIEW = 10_000;

export function withViewCache(inner: ViewStore, views: Iterable<string>, maxPerView = DEFAULT_DOCUMENTS_PER_VIEW): CachedViewStore {
  const caches = new Map<string, LRUCache<string, ViewDocument>>([...views].map((view) => [view, new LRUCache<string, ViewDocument>({ max: maxPerView })]));
  /** Commits (and resets) per cached view, so a miss can tell whether one overlapped its read. */
  const commits = new Map<string, number>([...caches.keys()].map((view) => [view, 0]));
  const stats = { hits: 0, misses: 0 };

  /** After a commit: its documents replace the cached ones; after a failed one they are dropped. */
  function committed(writes: readonly ViewWrite[], succeeded: boolean): void {
    const touched = new Set<string>();
    for (const write of writes) {
      const cache = caches.get(write.view);
      if (!cache) continue;
      touched.add(write.view);
      if (write.doc === null || !succeeded) {
        cache.delete(write.id);
        continue;
      }
      const cached = cache.peek(write.id);
      // Only documents someone reads are kept; a write at or below the cached position was ignored by the store.
      if (cached && cached.position < write.position) cache.set(write.id, { id: write.id, position: write.position, doc: write.doc });
    }
    for (const view of touched) commits.set(view, commits.get(view)! + 1);
  }

  return {
    get: <T>(view: string, id: string) => readThrough<T>(inner, caches.get(view), stats, view, id, () => commits.get(view)!),
    getMany: <T>(view: string, ids: readonly string[]) => inner.getMany<T>(view, ids),
    find: <T>(view: string, where: Readonly<Record<string, ViewFieldValue>>, options?: FindOptions) => inner.find<T>(view, where, options),
    count: (view, where) => inner.count(view, where),
    async commit(projection, writes, checkpoint) {
      let applied: number;
      try {
        applied = await inner.commit(projection, writes, checkpoint);
      } catch (err) {
        // A backend without transactions may have written part of it: forget what it touched.
        committed(writes, false);
        throw err;
      }
      committed(writes, true);
      return applied;
    },
    async commitAll(batch, checkpoint) {
      const writes = batch.flatMap((b) => b.writes);
      let applied: number;
      try {
        applied = await inner.commitAll(batch, checkpoint);
      } catch (err) {
        committed(writes, false);
        throw err;
      }
      committed(writes, true);
      return applied;
    },
    async bulkLoad(projection, writes, checkpoint) {
      try {
        await inner.bulkLoad(projection, writes, checkpoint);
      } finally {
        // Unguarded writes: the cached documents they touch are forgotten, not compared.
        committed(writes, false);
      }
    },
    getCheckpoint: (projection) => inner.getCheckpoint(projection),
    async reset(view, projection) {
      await inner.reset(view, projection);
      caches.get(view)?.clear();
      if (commits.has(view)) commits.set(view, commits.get(view)! + 1);
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
    cacheStats: () => ({ ...stats, documents: [...caches.values()].reduce((sum, cache) => sum + cache.size, 0) }),
  };
}
