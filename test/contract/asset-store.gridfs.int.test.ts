/**
 * The shared AssetStore contract against MongoDB GridFS (a container, or MONGO_URL). Tests
 * reuse keys, so each gets its own bucket; the file's database is dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { describe, vi } from 'vitest';
import { createGridFsAssetStore } from '../../src/adapters/mongo/asset-store.js';
import { contractTarget, dropMongoDatabase, useBackend } from '../support/containers.js';
import { assetStoreContract } from './asset-store.contract.js';

const target = contractTarget('mongo', 'GridFS asset store');
const dbName = `gateway_contract_assets_${randomUUID().slice(0, 8)}`;
vi.setConfig({ testTimeout: 60_000 });

describe.skipIf(!target.available)(target.title, () => {
  const url = useBackend(target, 'MongoDB', (backendUrl) => dropMongoDatabase(backendUrl, dbName));

  assetStoreContract('MongoDB GridFS', async () => {
    const store = createGridFsAssetStore({ url: url(), dbName, bucketName: `assets_${randomUUID().slice(0, 8)}` });
    return { store, cleanup: () => store.close() };
  });
});
