/** Fresh SQLite stores for each test of a file, closed and deleted after it. */
import { afterEach, beforeEach } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { tempDir } from './tmp.js';

/** Calls `use` with each test's store before the test runs. */
export function useTempEventStore(use: (store: EventStore) => void): void {
  useTempStores(({ events }) => use(events), { views: false });
}

/** Calls `use` with each test's event store and view store (`views: false`: none) before the test runs. */
export function useTempStores(use: (stores: { events: EventStore; views: ViewStore }) => void, options: { views?: boolean } = {}): void {
  let dir: ReturnType<typeof tempDir>;
  let open: { close(): Promise<void> }[] = [];
  beforeEach(() => {
    dir = tempDir();
    const events = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
    const views = options.views === false ? undefined : createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
    open = views ? [events, views] : [events];
    use({ events, views: views as ViewStore });
  });
  afterEach(async () => {
    await Promise.all(open.map((store) => store.close()));
    dir.remove();
  });
}
