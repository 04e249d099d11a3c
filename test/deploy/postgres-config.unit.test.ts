/** POSTGRES_URL and POSTGRES_SCHEMA as loadConfig reads them: refused settings name themselves, and the stores chosen say so. */
import { describe, expect, it } from 'vitest';
import { describeStores } from '../../src/adapters/select.js';
import { loadConfig } from '../../src/config.js';

const SECRET = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';

describe('PostgreSQL settings', () => {
  it('POSTGRES_URL puts the events and the views on PostgreSQL, in the gateway schema unless told, credentials never shown', () => {
    const config = loadConfig({ POSTGRES_URL: 'postgres://gw:s3cret@db:5432/media', CHANNEL_KEYS_SECRET: SECRET });
    expect(config.postgresSchema).toBe('gateway');
    expect(config.processes).toBe(1);
    expect(describeStores(config)).toEqual({
      events: 'PostgreSQL schema gateway at postgres://[redacted]@db:5432/media',
      views: 'PostgreSQL schema gateway at postgres://[redacted]@db:5432/media',
    });
  });

  it('EVENTSTORE_URL and MONGO_URL keep what they name; PostgreSQL serves the rest', () => {
    const config = loadConfig({
      POSTGRES_URL: 'postgresql://db/media',
      MONGO_URL: 'mongodb://m/views',
      CHANNEL_KEYS_SECRET: SECRET,
      POSTGRES_SCHEMA: 'tenant_a',
    });
    expect(describeStores(config)).toEqual({
      events: 'PostgreSQL schema tenant_a at postgresql://db/media',
      views: 'MongoDB database views at mongodb://m/views',
    });
  });

  it('refuses a URL that is no PostgreSQL connection string, a schema that is no plain identifier, and a shared event log without CHANNEL_KEYS_SECRET', () => {
    expect(() => loadConfig({ POSTGRES_URL: 'mysql://db/x', CHANNEL_KEYS_SECRET: SECRET })).toThrow(
      /^invalid configuration: POSTGRES_URL: must be a postgres:\/\//,
    );
    expect(() => loadConfig({ POSTGRES_URL: 'postgres://db/x', POSTGRES_SCHEMA: 'Tenant; DROP', CHANNEL_KEYS_SECRET: SECRET })).toThrow(
      /^invalid configuration: POSTGRES_SCHEMA: must be a lower-case SQL identifier/,
    );
    expect(() => loadConfig({ POSTGRES_URL: 'postgres://db/x' })).toThrow(/^invalid configuration: CHANNEL_KEYS_SECRET: required when POSTGRES_URL is set/);
    expect(() => loadConfig({ POSTGRES_URL: 'postgres://db/x', CHANNEL_KEYS_SECRET: SECRET, PROCESSES: '2' })).toThrow(
      /PROCESSES: 2 splits the embedded default/,
    );
  });
});
