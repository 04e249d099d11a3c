/**
 * Restart with tasks in flight on PostgreSQL (events and views in one schema of POSTGRES_URL;
 * the bus and the files in DATA_DIR): see restart.scenario.ts. The same kill -9 and the same
 * books as on the embedded default.
 */
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { createPostgresEventStore } from '../../src/adapters/postgres/event-store.js';
import { contractTarget } from '../support/containers.js';
import { freshSchema } from '../support/postgres.js';
import { restartScenario } from './restart.scenario.js';

const target = contractTarget('postgres', 'gateway on PostgreSQL');

describe.skipIf(!target.available)(target.title, () => {
  restartScenario('PostgreSQL', async () => {
    const backend = await target.start();
    const schema = freshSchema(backend.url, 'gw');
    return {
      // Required with a shared event log; the same on both starts, like every instance's.
      env: { POSTGRES_URL: backend.url, POSTGRES_SCHEMA: schema.schema, CHANNEL_KEYS_SECRET: randomBytes(32).toString('base64') },
      openEventStore: () => createPostgresEventStore({ url: backend.url, schema: schema.schema }),
      async cleanup() {
        await schema.drop();
        await backend.stop();
      },
    };
  });
});
