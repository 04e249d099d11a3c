/**
 * A split role on the embedded bus is refused at start: the embedded bus holds consumer-group
 * membership in one process's memory, so a second worker would own every partition too (both
 * would dispatch every task) and a projector's publishes would reach no other process.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { embeddedEnv, GATEWAY_SCRIPT } from '../support/child-gateway.js';
import { tempDir } from '../support/tmp.js';

describe('a split role needs the Kafka bus', () => {
  it('loadConfig refuses ROLE=worker and ROLE=projector without KAFKA_BROKERS, naming both settings', () => {
    for (const ROLE of ['worker', 'projector']) {
      expect(() => loadConfig({ ROLE, PUBLIC_BASE_URL: 'http://localhost:3001' })).toThrow(
        new RegExp(`^invalid configuration: KAFKA_BROKERS: required when ROLE=${ROLE}`),
      );
      expect(loadConfig({ ROLE, PUBLIC_BASE_URL: 'http://localhost:3001', KAFKA_BROKERS: '127.0.0.1:9092' }).role).toBe(ROLE);
    }
    // The embedded default and an api beside it stay as they are.
    expect(loadConfig({}).role).toBe('all');
    expect(loadConfig({ ROLE: 'api' }).role).toBe('api');
  });

  it('`npm start` with ROLE=worker and no KAFKA_BROKERS exits 1 with one line naming the setting, and writes nothing', () => {
    const dir = tempDir();
    try {
      const run = spawnSync(process.execPath, [GATEWAY_SCRIPT], {
        cwd: process.cwd(),
        env: { ...embeddedEnv(), ROLE: 'worker', PUBLIC_BASE_URL: 'http://localhost:3001', DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^invalid configuration: KAFKA_BROKERS: required when ROLE=worker/)]);
      expect(run.stdout).toBe('');
    } finally {
      dir.remove();
    }
  }, 90_000);
});
