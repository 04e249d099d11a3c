/** Restart with tasks in flight on the embedded default (SQLite files in DATA_DIR): see restart.scenario.ts. */
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { restartScenario } from './restart.scenario.js';

restartScenario('embedded default', async () => ({
  env: {},
  openEventStore: (dataDir) => createSqliteEventStore({ path: `${dataDir}/events.sqlite` }),
  cleanup: async () => undefined,
}));
