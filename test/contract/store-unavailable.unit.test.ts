/**
 * The networked stores whose servers cannot run here (EventStoreDB, MongoDB), through their real
 * clients, against a port nothing listens on: every call fails as StoreUnavailableError (which
 * HTTP answers 503), not as the client's own error (which it would answer 500). PostgreSQL's
 * case, and a server ending live connections, are in its contract suites on a real server.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEsdbEventStore } from '../../src/adapters/esdb/event-store.js';
import { createGridFsAssetStore } from '../../src/adapters/mongo/asset-store.js';
import { createMongoViewStore } from '../../src/adapters/mongo/view-store.js';
import { StoreUnavailableError } from '../../src/ports/store-unavailable.js';

const newEvent = () => ({ id: randomUUID(), type: 'Tested', data: {}, metadata: { at: new Date().toISOString() } });
// Port 1 on loopback: refused at once. The driver gives up selecting a server after 300 ms.
const MONGO_URL = 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300';

describe('a store whose server cannot be reached', () => {
  it('EventStoreDB: appends, reads and ping fail as StoreUnavailableError', async () => {
    const store = createEsdbEventStore({ connectionString: 'esdb://127.0.0.1:1?tls=false' });
    try {
      await expect(store.append('task-x', [newEvent()])).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.readStream('task-x')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.ping()).rejects.toThrow(/^EventStoreDB is unavailable: /);
    } finally {
      await store.close().catch(() => undefined);
    }
  });

  it('MongoDB views: reads, commits and ping fail as StoreUnavailableError', async () => {
    const store = createMongoViewStore({ url: MONGO_URL, dbName: 'unreachable' });
    try {
      await expect(store.get('tasks', 'a')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.commit('p', [{ view: 'tasks', id: 'a', position: 1n, doc: { n: 1 } }], 1n)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.ping()).rejects.toThrow(/^MongoDB is unavailable: /);
    } finally {
      await store.close().catch(() => undefined);
    }
  });

  it('GridFS assets: writes and reads fail as StoreUnavailableError', async () => {
    const store = createGridFsAssetStore({ url: MONGO_URL, dbName: 'unreachable', bucketName: 'assets' });
    try {
      await expect(store.put('tasks/t/0.png', Buffer.from('x'), 'image/png')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.get('tasks/t/0.png')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close().catch(() => undefined);
    }
  });
});
