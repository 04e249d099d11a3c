/**
 * The PostgreSQL event store shared by eight writer processes (api and worker instances on one
 * database): see event-store-processes.contract.ts. This process follows through LISTEN/NOTIFY,
 * its poll a minute away.
 */
import { describe } from 'vitest';
import { createPostgresEventStore } from '../../src/adapters/postgres/event-store.js';
import { contractTarget, useBackend } from '../support/containers.js';
import { freshSchema } from '../support/postgres.js';
import { sharedByProcessesContract } from './event-store-processes.contract.js';

const target = contractTarget('postgres', 'PostgreSQL event store (processes)');

describe.skipIf(!target.available)(target.title, () => {
  const backendUrl = useBackend(target, 'PostgreSQL');

  sharedByProcessesContract('PostgreSQL', 8, 25, async () => {
    const url = backendUrl();
    const schema = freshSchema(url, 'procs');
    const reader = createPostgresEventStore({ url, schema: schema.schema, pollIntervalMs: 60_000 });
    return {
      reader,
      writerArgs: ['postgres', url, schema.schema],
      async cleanup() {
        await reader.close();
        await schema.drop();
      },
    };
  });
});
