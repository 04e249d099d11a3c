/**
 * The audit and the rebuild with the events and the views in PostgreSQL (POSTGRES_URL, a schema
 * of this run's own; Debian's PostgreSQL in CI, see .ci/run): see audit-tools.scenario.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { contractTarget } from '../support/containers.js';
import { freshSchema } from '../support/postgres.js';
import { auditToolsScenario } from './audit-tools.scenario.js';

const target = contractTarget('postgres', 'audit and rebuild on PostgreSQL');

describe.skipIf(!target.available)(target.title, () => {
  auditToolsScenario('the events and the views in PostgreSQL', async () => {
    const backend = await target.start();
    const schema = freshSchema(backend.url, 'audit');
    return {
      env: { POSTGRES_URL: backend.url, POSTGRES_SCHEMA: schema.schema, CHANNEL_KEYS_SECRET: randomBytes(32).toString('base64') },
      storesLine: new RegExp(`^events: PostgreSQL schema ${schema.schema} at postgres://.*; views: PostgreSQL schema ${schema.schema} at postgres://`),
      async cleanup() {
        await schema.drop();
        await backend.stop();
      },
    };
  });
});
