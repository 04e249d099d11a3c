/** The split roles (split-roles.scenario.ts) on the embedded stores: SQLite files every process shares in one DATA_DIR. */
import { join } from 'node:path';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { splitRolesSuite } from './split-roles.scenario.js';

splitRolesSuite({
  name: 'SQLite',
  required: false,
  env: () => ({}),
  openEvents: (dataDir) => createSqliteEventStore({ path: join(dataDir, 'events.sqlite') }),
  openViews: (dataDir) => createSqliteViewStore({ path: join(dataDir, 'views.sqlite') }),
});
