/**
 * Poll from memory in a process that does not commit the views itself: the API process of
 * `PROCESSES=2`, whose engine process projects (docs/decisions/0146-api-process-view-cache.md).
 * The documents of the cached views are kept in a bounded LRU, as view-cache.ts keeps them
 * where the runner commits; here nothing tells this process of a commit, so it learns what
 * changed from the event log instead.
 *
 * The checkpoint follower (follower.ts) moves its position `reached` only after `invalidate(reached, to)`
 * has run for the projections' new checkpoint `to`: every event in (reached, to] is read, and the
 * document each cached projection would fold it into is dropped. So a cached document never
 * misses an event at or below `reached`:
 *
 * - a document is cached only from a store read that began after the last invalidation began
 *   (a generation count, as view-cache.ts counts commits); such a read began when the store's
 *   checkpoints were at least the `reached` of that moment, so it holds every event up to it;
 * - any later event of it lies above that `reached`, in a range a later invalidation reads,
 *   which drops it.
 *
 * What it may miss are the commits of the last look: a poll answers at most one follower step
 * (EVENT_POLL_INTERVAL_MS, 20 ms between the two processes) behind the store, never older than a
 * poll it answered before. Absence is never cached.
 *
 * The same pass tells what changed in the watched views (tokens, users, channels, prices), with
 * their stored documents, as a projecting runner's commits tell it: the follower hands them to
 * its `onCommit` listeners, so a revoked key or a disabled user stops here at once too.
 */
import { LRUCache } from 'lru-cache';
import { toDomainEvent, type RecordedDomainEvent } from '../src/domain/recorded.js';
import { createFinalEventLags } from './final-event-lags.js';
import type { EventStore } from '../src/ports/event-store.js';
import type { ViewDocument, ViewStore, ViewWrite } from '../src/ports/view-store.js';
import type { Projection } from './projection.js';
import { readThrough, type CachedViewStore } from './view-cache.js';

export interface FollowerViewCache extends CachedViewStore {
  /**
   * Drops the cached documents the events in (from, to] change, and answers the watched views'
   * documents they changed, as stored now (null: deleted); the follower calls it before it reaches `to`.
   */
  invalidate(this: void, from: bigint, to: bigint): Promise<ViewWrite[]>;
  /** The lag of final task events to the moment this process's cache could show them. */
  finalEventLags(this: void): readonly number[];
}

export interface FollowedProjections {
  /** Whose documents are cached. */
  cached: readonly Projection[];
  /** Whose changes are told. */
  watched?: readonly Projection[];
}

const DEFAULT_DOCUMENTS_PER_VIEW = 10_000;
const PAGE = 1000;

export function withFollowerViewCache(
  inner: ViewStore,
  events: Pick<EventStore, 'readAll'>,
  { cached, watched = [] }: FollowedProjections,
  maxPerView = DEFAULT_DOCUMENTS_PER_VIEW,
): FollowerViewCache {
  const caches = new Map<string, LRUCache<string, ViewDocument>>(cached.map((p) => [p.view, new LRUCache<string, ViewDocument>({ max: maxPerView })]));
  const projections = [...cached, ...watched];
  const stats = { hits: 0, misses: 0 };
  let generation = 0;
  const lags = createFinalEventLags();

  function clear(): void {
    generation++;
    for (const cache of caches.values()) cache.clear();
  }

  async function invalidate(from: bigint, to: bigint): Promise<ViewWrite[]> {
    generation++;
    const finals: RecordedDomainEvent[] = [];
    const touched = new Map<string, Set<string>>(watched.map((p) => [p.view, new Set<string>()]));
    for (let after = from; after < to;) {
      const batch = await events.readAll({ after, maxCount: PAGE });
      if (batch.length === 0) break;
      for (const raw of batch) {
        if (raw.position > to) break;
        const event = toDomainEvent(raw);
        if (!event) continue;
        if (event.type === 'TaskSucceeded' || event.type === 'TaskFailed') finals.push(event);
        for (const projection of projections) {
          if (!projection.handles.includes(event.type)) continue;
          const id = projection.documentId(event);
          if (id === undefined) continue;
          caches.get(projection.view)?.delete(id);
          touched.get(projection.view)?.add(id);
        }
      }
      after = batch[batch.length - 1]!.position;
    }
    const writes: ViewWrite[] = [];
    for (const [view, ids] of touched) {
      if (ids.size === 0) continue;
      const stored = new Map((await inner.getMany(view, [...ids])).map((d) => [d.id, d]));
      for (const id of ids) writes.push({ view, id, position: stored.get(id)?.position ?? to, doc: stored.get(id)?.doc ?? null });
    }
    lags.record(finals);
    return writes;
  }

  return {
    get: <T>(view: string, id: string) => readThrough<T>(inner, caches.get(view), stats, view, id, () => generation),
    getMany: (view, ids) => inner.getMany(view, ids),
    find: (view, where, options) => inner.find(view, where, options),
    count: (view, where) => inner.count(view, where),
    // The process that projects writes the views; should this one ever write, it forgets what it cached.
    commit: (projection, writes, checkpoint) => inner.commit(projection, writes, checkpoint).finally(clear),
    commitAll: (batch, checkpoint) => inner.commitAll(batch, checkpoint).finally(clear),
    bulkLoad: (projection, writes, checkpoint) => inner.bulkLoad(projection, writes, checkpoint).finally(clear),
    reset: (view, projection) => inner.reset(view, projection).finally(clear),
    getCheckpoint: (projection) => inner.getCheckpoint(projection),
    ping: () => inner.ping(),
    close: () => inner.close(),
    cacheStats: () => ({ ...stats, documents: [...caches.values()].reduce((sum, cache) => sum + cache.size, 0) }),
    invalidate,
    finalEventLags: () => lags.sample(),
  };
}
