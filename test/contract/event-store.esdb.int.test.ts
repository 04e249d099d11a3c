/**
 * The shared EventStore contract against EventStoreDB (a container, or EVENTSTORE_URL).
 * Streams are unique per test, so a long-lived shared server works too.
 */
import { describe, vi } from 'vitest';
import { createEsdbEventStore } from '../../src/adapters/esdb/event-store.js';
import { contractTarget, useBackend } from '../support/containers.js';
import { eventStoreContract } from './event-store.contract.js';

const target = contractTarget('eventstore', 'EventStoreDB');
vi.setConfig({ testTimeout: 60_000 });

describe.skipIf(!target.available)(target.title, () => {
  const url = useBackend(target, 'EventStoreDB');

  eventStoreContract('EventStoreDB', async () => {
    const store = createEsdbEventStore({ connectionString: url(), reconnectMinMs: 50 });
    return { store, cleanup: () => store.close() };
  });
});
