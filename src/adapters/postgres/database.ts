/**
 * The connection pool the PostgreSQL adapters share the shape of: one pool per store, every
 * connection on the store's schema (`search_path`, set in the start-up packet, so no query of
 * the adapters names a schema and none can run before it is set). A schema per deployment lets
 * several gateways (or test runs) share one database.
 */
import pg from 'pg';
import { DEFAULT_SCHEMA, SCHEMA_NAME } from '../../config/postgres-schema.js';

export type PostgresPool = pg.Pool;
export type PostgresClient = pg.PoolClient;

export interface PostgresOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Schema holding the store's tables, created when missing (default `gateway`). */
  schema?: string;
  /** Connections kept at most (default 10). */
  maxConnections?: number;
}

export function schemaName(options: PostgresOptions): string {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) throw new TypeError(`PostgreSQL schema must match ${SCHEMA_NAME.source}, got ${JSON.stringify(schema)}`);
  return schema;
}

export function openPool(options: PostgresOptions): PostgresPool {
  const schema = schemaName(options);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    options: `-c search_path=${schema}`,
    application_name: applicationName(schema),
    // A server that stops answering fails a query instead of holding it for ever.
    connectionTimeoutMillis: 10_000,
  });
  // An idle connection the server dropped (a restart) is an 'error' event on the pool: without a
  // listener it would end the process; the next query opens a new connection.
  pool.on('error', () => undefined);
  return pool;
}

/** What pg_stat_activity shows for the connections of a store on `schema`: an operator sees whose they are. */
export function applicationName(schema: string): string {
  return `media-gateway ${schema}`;
}

/** Creates the schema, then runs `ddl` in it, once per store (idempotent statements only). */
export function ensureSchema(pool: PostgresPool, schema: string, ddl: string): Promise<void> {
  return inTransaction(pool, async (client) => {
    // Two stores starting together on a fresh database would race on CREATE IF NOT EXISTS
    // (a unique violation on the catalog): one at a time, per schema.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway-schema:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(ddl);
  });
}

/**
 * Runs `work` in one transaction on one connection; rolled back when it throws. `opening`, a
 * statement without parameters, is sent in one message with the BEGIN (the event store takes
 * its write lock so, saving a round trip); `work` is given its rows.
 */
export async function inTransaction<T>(
  pool: PostgresPool,
  work: (client: PostgresClient, opened: Record<string, unknown>[]) => Promise<T>,
  opening?: string,
): Promise<T> {
  const client = await pool.connect();
  // A connection whose ROLLBACK failed is in no known state: it is closed, not reused.
  let broken = false;
  // Checked out, a client has no 'error' listener of the pool's (pg-pool removes it): a server
  // gone between two statements would be an unhandled 'error' event and end the process. The
  // statement in flight, or the next, fails instead, and the connection is not reused.
  const dropped = (): void => void (broken = true);
  client.on('error', dropped);
  try {
    // With two statements node-postgres answers with one result each.
    const begun = opening ? ((await client.query(`BEGIN; ${opening}`)) as unknown as pg.QueryResult[])[1]!.rows : (await client.query('BEGIN'), []);
    const result = await work(client, begun as Record<string, unknown>[]);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.off('error', dropped);
    client.release(broken);
  }
}
