/** `--store` of the bench: SQLite unless told, PostgreSQL only with POSTGRES_URL, anything else refused by name. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { scenarioStores, storeOf } from '../../bench/stores.js';

afterEach(() => vi.unstubAllEnvs());

describe('bench --store', () => {
  it('is SQLite by default, and takes sqlite or postgres', () => {
    expect(storeOf(['--only', 'lifecycle'])).toBe('sqlite');
    expect(storeOf(['--store', 'postgres'])).toBe('postgres');
    expect(() => storeOf(['--store', 'mysql'])).toThrow('--store takes sqlite or postgres, not mysql');
    expect(() => storeOf(['--store'])).toThrow('not nothing');
  });

  it('on PostgreSQL: a schema of the run, one process, a channel keys secret; refused without POSTGRES_URL', () => {
    vi.stubEnv('POSTGRES_URL', 'postgres://gateway@127.0.0.1:1/gateway');
    const { env } = scenarioStores('postgres');
    expect(env).toMatchObject({
      POSTGRES_URL: 'postgres://gateway@127.0.0.1:1/gateway',
      PROCESSES: '1',
      POSTGRES_SCHEMA: expect.stringMatching(/^bench_[0-9a-f]{12}$/),
    });
    expect(Buffer.from(env.CHANNEL_KEYS_SECRET!, 'base64')).toHaveLength(32);
    expect(scenarioStores('sqlite').env).toEqual({});
    vi.stubEnv('POSTGRES_URL', '');
    expect(() => scenarioStores('postgres')).toThrow('--store postgres needs POSTGRES_URL');
  });
});
