/**
 * Chooses each port's adapter from configuration: a URL present selects that backend
 * (POSTGRES_URL serves the events and the views that EVENTSTORE_URL and MONGO_URL leave to it),
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

const DEFAULT_DB_NAME = 'gateway';

/**
 * The database named in MONGO_URL's path (`mongodb://host:27017/mydb?…`), else `gateway`: what
 * a MongoDB connection string means, and how several deployments share one server.
 */
function mongoDbName(url: string): string {
  const path = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(url)?.[1];
  return path ? decodeURIComponent(path) : DEFAULT_DB_NAME;
}

export async function eventStore(config: Config): Promise<EventStore> {
  if (config.eventStoreUrl) return (await import('./esdb/event-store.js')).createEsdbEventStore({ connectionString: config.eventStoreUrl });
  if (config.postgresUrl)
    return (await import('./postgres/event-store.js')).createPostgresEventStore({
      url: config.postgresUrl,
      schema: config.postgresSchema,
      pollIntervalMs: config.eventPollIntervalMs,
    });
  return (await import('./sqlite/event-store.js')).createSqliteEventStore({
    path: join(config.dataDir, 'events.sqlite'),
    pollIntervalMs: config.eventPollIntervalMs,
  });
}

export async function viewStore(config: Config): Promise<ViewStore> {
  if (config.mongoUrl) return (await import('./mongo/view-store.js')).createMongoViewStore({ url: config.mongoUrl, dbName: mongoDbName(config.mongoUrl) });
  if (config.postgresUrl) return (await import('./postgres/view-store.js')).createPostgresViewStore({ url: config.postgresUrl, schema: config.postgresSchema });
  return (await import('./sqlite/view-store.js')).createSqliteViewStore({ path: join(config.dataDir, 'views.sqlite') });
}

async function bus(config: Config): Promise<Bus> {
  if (config.kafkaBrokers)
    return (await import('./kafka/bus.js')).createKafkaBus({
      brokers: config.kafkaBrokers,
      clientId: 'media-gateway',
      partitions: config.busPartitions,
      namePrefix: config.kafkaPrefix,
    });
  return (await import('./inproc/bus.js')).createInprocBus({ path: join(config.dataDir, 'bus.sqlite'), partitions: config.busPartitions });
}

async function assetStore(config: Config): Promise<AssetStore> {
  if (config.mongoUrl)
    return (await import('./mongo/asset-store.js')).createGridFsAssetStore({
      url: config.mongoUrl,
      dbName: mongoDbName(config.mongoUrl),
      bucketName: 'assets',
    });
  return (await import('./fs/asset-store.js')).createFsAssetStore({ dir: join(config.dataDir, 'assets') });
}

/** Which backends `eventStore`/`viewStore` open for this configuration, for a tool's first line. */
export function describeStores(config: Config): { events: string; views: string } {
  const postgres = config.postgresUrl ? `PostgreSQL schema ${config.postgresSchema} at ${redactUrl(config.postgresUrl)}` : undefined;
  return {
    events: config.eventStoreUrl ? `EventStoreDB at ${redactUrl(config.eventStoreUrl)}` : (postgres ?? `SQLite ${join(config.dataDir, 'events.sqlite')}`),
    views: config.mongoUrl
      ? `MongoDB database ${mongoDbName(config.mongoUrl)} at ${redactUrl(config.mongoUrl)}`
      : (postgres ?? `SQLite ${join(config.dataDir, 'views.sqlite')}`),
  };
}

/** A connection string without its credentials (they must never reach a terminal or a log). */
function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//[redacted]@');
}

export async function selectAdapters(config: Config): Promise<Adapters> {
  return { events: await eventStore(config), views: await viewStore(config), bus: await bus(config), assets: await assetStore(config) };
}
