/**
 * The shared ViewStore contract against MongoDB (a single-node replica set container, or
 * MONGO_URL). One database per run of this file, dropped afterwards; views are unique per test.
 * Then the MongoDB encoding of positions (view-query.ts): longs, Decimal128 above 2^63-1 and in
 * documents of earlier versions, compared by value across the two types. And a store whose
 * first calls found no server, once the server answers.
 */
import { randomUUID } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { Decimal128, MongoClient } from 'mongodb';
import { describe, expect, it, vi } from 'vitest';
import { CHECKPOINTS, viewCollectionName, type CheckpointRecord, type ViewRecord } from '../../src/adapters/mongo/view-query.js';
import { createMongoViewStore } from '../../src/adapters/mongo/view-store.js';
import { StoreUnavailableError } from '../../src/ports/store-unavailable.js';
import { freePort } from '../support/child-gateway.js';
import { contractTarget, dropMongoDatabase, standinDifference, useBackend } from '../support/containers.js';
import { viewStoreContract } from './view-store.contract.js';
import { uniqueView, write } from './view-store.fixtures.js';

const target = contractTarget('mongo', 'MongoDB view store');
const dbName = `gateway_contract_views_${randomUUID().slice(0, 8)}`;
vi.setConfig({ testTimeout: 60_000 });

/** FerretDB 1.x drops the connection on any Decimal128 value (BSON type 0x13). */
const NO_DECIMAL128 = 'FerretDB 1.x has no Decimal128 (FerretDB/FerretDB#66) and drops the connection on one';
const aboveLongs = standinDifference('ferretdb', 'positions above 2^63-1 (Decimal128) and longs guard each other by value', NO_DECIMAL128);
const earlierDecimals = standinDifference('ferretdb', 'documents and checkpoints stored as Decimal128 by earlier versions are read and guarded', NO_DECIMAL128);

describe.skipIf(!target.available)(target.title, () => {
  const url = useBackend(target, 'MongoDB', (backendUrl) => dropMongoDatabase(backendUrl, dbName));

  viewStoreContract('MongoDB', async () => {
    const store = createMongoViewStore({ url: url(), dbName });
    return { store, cleanup: () => store.close() };
  });

  describe('position encoding', () => {
    const longMax = 2n ** 63n - 1n;

    it.skipIf(aboveLongs.skip)(aboveLongs.title, async () => {
      const store = createMongoViewStore({ url: url(), dbName });
      try {
        const [view, projection] = [uniqueView(), uniqueView('projection')];
        await store.commit(projection, [write(view, 'a', longMax + 5n, { v: 'decimal' })], longMax + 5n);
        expect(await store.commit(projection, [write(view, 'a', longMax, { v: 'long' })], longMax)).toBe(0);
        expect(await store.get(view, 'a')).toEqual({ id: 'a', position: longMax + 5n, doc: { v: 'decimal' } });
        expect(await store.getCheckpoint(projection)).toBe(longMax + 5n);
        expect(await store.commit(projection, [write(view, 'a', longMax + 6n, { v: 'next' })], longMax + 6n)).toBe(1);
        expect(await store.get(view, 'a')).toEqual({ id: 'a', position: longMax + 6n, doc: { v: 'next' } });

        await store.commit(projection, [write(view, 'b', longMax, { v: 'long' })], undefined);
        expect(await store.commit(projection, [write(view, 'b', longMax + 1n, { v: 'decimal' })], undefined)).toBe(1);
        expect((await store.get(view, 'b'))?.position).toBe(longMax + 1n);
      } finally {
        await store.close();
      }
    });

    it.skipIf(earlierDecimals.skip)(earlierDecimals.title, async () => {
      const [view, projection] = [uniqueView(), uniqueView('projection')];
      const client = new MongoClient(url());
      try {
        const db = client.db(dbName);
        await db.collection<ViewRecord>(viewCollectionName(view)).insertOne({ _id: 'a', position: Decimal128.fromString('10'), doc: { v: 10 } });
        await db.collection<CheckpointRecord>(CHECKPOINTS).insertOne({ _id: projection, position: Decimal128.fromString('10') });
      } finally {
        await client.close();
      }
      const store = createMongoViewStore({ url: url(), dbName });
      try {
        expect(await store.get(view, 'a')).toEqual({ id: 'a', position: 10n, doc: { v: 10 } });
        expect(await store.getCheckpoint(projection)).toBe(10n);
        expect(await store.commit(projection, [write(view, 'a', 9n, { v: 9 })], 9n)).toBe(0);
        expect(await store.getCheckpoint(projection)).toBe(10n);
        expect(await store.commit(projection, [write(view, 'a', 11n, { v: 11 })], 11n)).toBe(1);
        expect(await store.get(view, 'a')).toEqual({ id: 'a', position: 11n, doc: { v: 11 } });
        expect(await store.getCheckpoint(projection)).toBe(11n);
      } finally {
        await store.close();
      }
    });
  });

  it('a store whose first calls found no server works once the server answers (the driver keeps a closed topology otherwise)', async () => {
    // A port nothing listens on yet, later a plain TCP relay to the real server: the server
    // "comes up" under the same address, as MongoDB does after the gateway in a deployment.
    const port = await freePort();
    const real = new URL(url());
    const relayed = new URL(url());
    relayed.host = `127.0.0.1:${port}`;
    relayed.searchParams.set('serverSelectionTimeoutMS', '500');
    const store = createMongoViewStore({ url: relayed.toString(), dbName });
    const relay = createServer((client) => {
      const upstream = connect(Number(real.port), real.hostname);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    try {
      const view = uniqueView();
      await expect(store.get(view, 'a')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.commit('p', [write(view, 'a', 1n, { v: 1 })], 1n)).rejects.toBeInstanceOf(StoreUnavailableError);
      await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
      expect(await store.commit('p', [write(view, 'a', 1n, { v: 1 })], 1n)).toBe(1);
      expect(await store.get(view, 'a')).toEqual({ id: 'a', position: 1n, doc: { v: 1 } });
    } finally {
      await store.close();
      relay.close();
    }
  });
});
