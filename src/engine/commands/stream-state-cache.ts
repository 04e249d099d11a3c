/**
 * The states this process last folded, by store, decider and stream, so a command reads only
 * the events appended since (`fromRevision`) instead of the whole stream each time: the poller
 * decides on a task every few seconds, and a task stream is read a dozen times in its life.
 *
 * Safe because streams only grow and states are never changed in place (every `evolve` returns
 * a new state): a cached state at revision r plus the events after r is the state at the head,
 * whoever appended them (another process, or an append of ours whose answer was lost). Kept per
 * store object, so two stores in one process (tests, the simulation's processes) never share.
 */
import { LRUCache } from 'lru-cache';
import type { Decider } from '../../domain/decider.js';
import type { EventStore } from '../../ports/event-store.js';

export interface CachedState {
  state: unknown;
  revision: number;
}

/** Streams kept per decider and store: a few thousand tasks in flight, each a small state. */
const STREAMS_KEPT = 5000;

const byStore = new WeakMap<EventStore, WeakMap<object, LRUCache<string, CachedState>>>();

export function streamStateCache(events: EventStore, decider: Decider<never, never, never>): LRUCache<string, CachedState> {
  let byDecider = byStore.get(events);
  if (!byDecider) byStore.set(events, (byDecider = new WeakMap()));
  let cache = byDecider.get(decider);
  if (!cache) byDecider.set(decider, (cache = new LRUCache({ max: STREAMS_KEPT })));
  return cache;
}
