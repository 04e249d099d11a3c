/** The SQLite event store shared by four writer processes (the parts of `npm start` share DATA_DIR): see event-store-processes.contract.ts. */
import { join } from 'node:path';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { tempDir } from '../support/tmp.js';
import { sharedByProcessesContract } from './event-store-processes.contract.js';

sharedByProcessesContract('SQLite', 4, 40, async () => {
  const dir = tempDir('sqlite-processes-');
  const path = join(dir.path, 'events.sqlite');
  // Woken by its poll: no append is made in this process.
  const reader = createSqliteEventStore({ path, pollIntervalMs: 50 });
  return {
    reader,
    writerArgs: ['sqlite', path],
    async cleanup() {
      await reader.close();
      dir.remove();
    },
  };
});
