/**
 * The one rule for a PostgreSQL schema name, read by the configuration (POSTGRES_SCHEMA) and by
 * the PostgreSQL adapters; here, so that reading the configuration never loads `pg`.
 * Lower-case SQL identifiers only: the schema is put into SQL text, never bound.
 */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export const DEFAULT_SCHEMA = 'gateway';
