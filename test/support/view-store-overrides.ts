/**
 * A lagging or faulty view store, not a mock: the real store with some methods replaced; every
 * other call goes to the store itself (the view-store twin of event-store-overrides.ts).
 */
import type { ViewStore } from '../../src/ports/view-store.js';

export function withViewOverrides(store: ViewStore, overrides: Partial<ViewStore>): ViewStore {
  return {
    get: (view, id) => store.get(view, id),
    getMany: (view, ids) => store.getMany(view, ids),
    find: (view, where, options) => store.find(view, where, options),
    count: (view, where) => store.count(view, where),
    commit: (projection, writes, checkpoint) => store.commit(projection, writes, checkpoint),
    commitAll: (batch, checkpoint) => store.commitAll(batch, checkpoint),
    bulkLoad: (projection, writes, checkpoint) => store.bulkLoad(projection, writes, checkpoint),
    getCheckpoint: (projection) => store.getCheckpoint(projection),
    reset: (view, projection) => store.reset(view, projection),
    ping: () => store.ping(),
    close: () => store.close(),
    ...overrides,
  };
}
