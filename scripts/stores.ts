/** Opens the configured stores for the command-line tools (the embedded files under DATA_DIR). */
import { join } from 'node:path';
import { createSqliteEventStore } from '../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../src/adapters/sqlite/view-store.js';
import { loadConfig } from '../src/config.js';

export function openStores() {
  const config = loadConfig();
  if (config.eventStoreUrl || config.mongoUrl) {
    throw new Error('the command-line tools open the embedded stores; point DATA_DIR at them (distributed backends: not yet)');
  }
  const events = createSqliteEventStore({ path: join(config.dataDir, 'events.sqlite') });
  const views = createSqliteViewStore({ path: join(config.dataDir, 'views.sqlite') });
  return { config, events, views, close: async () => Promise.all([events.close(), views.close()]) };
}

export function argValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
