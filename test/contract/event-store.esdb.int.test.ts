/**
 * The shared EventStore contract against EventStoreDB (a container, or EVENTSTORE_URL).
 * Streams are unique per test, so a long-lived shared server works too.
 */
import { afterAll, beforeAll, describe, vi } from 'vitest';
import { createEsdbEventStore } from '../../src/adapters/esdb/event-store.js';
import { BACKEND_STARTUP_TIMEOUT_MS, contractTarget, type RunningBackend } from '../support/containers.js';
import { eventStoreContract } from './event-store.contract.js';

const target = contractTarget('eventstore', 'EventStoreDB');
vi.setConfig({ testTimeout: 60_000 });

describe.skipIf(!target.available)(target.title, () => {
  let backend: RunningBackend | undefined;
  beforeAll(async () => {
    backend = await target.start();
  }, BACKEND_STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    await backend?.stop();
  });

  eventStoreContract('EventStoreDB', async () => {
    if (!backend) throw new Error('EventStoreDB did not start');
    const store = createEsdbEventStore({ connectionString: backend.url, reconnectMinMs: 50 });
    return { store, cleanup: () => store.close() };
  });
});
