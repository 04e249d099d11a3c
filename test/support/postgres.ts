/**
 * Schemas of their own for tests on a shared PostgreSQL server (POSTGRES_URL, or a container):
 * each store under test gets a fresh schema, dropped with everything in it afterwards.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export interface TestSchema {
  schema: string;
  drop(): Promise<void>;
}

export function freshSchema(url: string, prefix: string): TestSchema {
  const schema = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return {
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
