/**
 * Chooses each port's adapter from configuration: a URL present selects that backend,
 * otherwise the embedded default under DATA_DIR. The distributed clients are imported only
 * when configured, so the embedded default never loads them.
 */
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { AssetStore } from '../ports/asset-store.js';
import type { Bus } from '../ports/bus.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';

export interface Adapters {
  events: EventStore;
  views: ViewStore;
  bus: Bus;
  assets: AssetStore;
}

const DB_NAME = 'gateway';

async function eventStore(config: Config): Promise<EventStore> {
  if (config.eventStoreUrl) return (await import('./esdb/event-store.js')).createEsdbEventStore({ connectionString: config.eventStoreUrl });
  return (await import('./sqlite/event-store.js')).createSqliteEventStore({ path: join(config.dataDir, 'events.sqlite') });
}

async function viewStore(config: Config): Promise<ViewStore> {
  if (config.mongoUrl) return (await import('./mongo/view-store.js')).createMongoViewStore({ url: config.mongoUrl, dbName: DB_NAME });
  return (await import('./sqlite/view-store.js')).createSqliteViewStore({ path: join(config.dataDir, 'views.sqlite') });
}

async function bus(config: Config): Promise<Bus> {
  if (config.kafkaBrokers) return (await import('./kafka/bus.js')).createKafkaBus({ brokers: config.kafkaBrokers, clientId: 'media-gateway', partitions: config.busPartitions });
  return (await import('./inproc/bus.js')).createInprocBus({ path: join(config.dataDir, 'bus.sqlite'), partitions: config.busPartitions });
}

async function assetStore(config: Config): Promise<AssetStore> {
  if (config.mongoUrl) return (await import('./mongo/asset-store.js')).createGridFsAssetStore({ url: config.mongoUrl, dbName: DB_NAME, bucketName: 'assets' });
  return (await import('./fs/asset-store.js')).createFsAssetStore({ dir: join(config.dataDir, 'assets') });
}

export async function selectAdapters(config: Config): Promise<Adapters> {
  return { events: await eventStore(config), views: await viewStore(config), bus: await bus(config), assets: await assetStore(config) };
}
