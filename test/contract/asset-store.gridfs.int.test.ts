/**
 * The shared AssetStore contract against MongoDB GridFS (a container, or MONGO_URL). Tests
 * reuse keys, so each gets its own bucket; the file's database is dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, vi } from 'vitest';
import { createGridFsAssetStore } from '../../src/adapters/mongo/asset-store.js';
import { BACKEND_STARTUP_TIMEOUT_MS, contractTarget, dropMongoDatabase, type RunningBackend } from '../support/containers.js';
import { assetStoreContract } from './asset-store.contract.js';

const target = contractTarget('mongo', 'GridFS asset store');
const dbName = `gateway_contract_assets_${randomUUID().slice(0, 8)}`;
vi.setConfig({ testTimeout: 60_000 });

describe.skipIf(!target.available)(target.title, () => {
  let backend: RunningBackend | undefined;
  beforeAll(async () => {
    backend = await target.start();
  }, BACKEND_STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    if (backend) await dropMongoDatabase(backend.url, dbName);
    await backend?.stop();
  });

  assetStoreContract('MongoDB GridFS', async () => {
    if (!backend) throw new Error('MongoDB did not start');
    const store = createGridFsAssetStore({ url: backend.url, dbName, bucketName: `assets_${randomUUID().slice(0, 8)}` });
    return { store, cleanup: () => store.close() };
  });
});
