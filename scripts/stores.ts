/**
 * Opens the stores the gateway itself would open with this environment, for the command-line
 * tools: EventStoreDB when EVENTSTORE_URL is set, MongoDB when MONGO_URL is set, else the
 * embedded SQLite files under DATA_DIR. The first line on stderr says which.
 */
import { describeStores, eventStore, viewStore } from '../src/adapters/select.js';
import { loadConfig } from '../src/config.js';

export async function openStores() {
  const config = loadConfig();
  const which = describeStores(config);
  process.stderr.write(`events: ${which.events}; views: ${which.views}\n`);
  const events = await eventStore(config);
  const views = await viewStore(config);
  return { config, events, views, close: async () => Promise.all([events.close(), views.close()]) };
}

export function argValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
