/**
 * The shared ViewStore contract against MongoDB (a single-node replica set container, or
 * MONGO_URL). One database per run of this file, dropped afterwards; views are unique per test.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, vi } from 'vitest';
import { createMongoViewStore } from '../../src/adapters/mongo/view-store.js';
import { BACKEND_STARTUP_TIMEOUT_MS, contractTarget, dropMongoDatabase, type RunningBackend } from '../support/containers.js';
import { viewStoreContract } from './view-store.contract.js';

const target = contractTarget('mongo', 'MongoDB view store');
const dbName = `gateway_contract_views_${randomUUID().slice(0, 8)}`;
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

  viewStoreContract('MongoDB', async () => {
    if (!backend) throw new Error('MongoDB did not start');
    const store = createMongoViewStore({ url: backend.url, dbName });
    return { store, cleanup: () => store.close() };
  });
});
