/** A fresh SQLite event store for each test of a file, closed and deleted after it. */
import { afterEach, beforeEach } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { tempDir } from './tmp.js';

/** Calls `use` with each test's store before the test runs. */
export function useTempEventStore(use: (store: EventStore) => void): void {
  let dir: ReturnType<typeof tempDir>;
  let store: EventStore;
  beforeEach(() => {
    dir = tempDir();
    store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
    use(store);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });
}
