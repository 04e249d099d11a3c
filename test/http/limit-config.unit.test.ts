/** The limits' settings: off (0) by default, and a bad value refuses to start with one line naming it. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const LIMITS = ['RATE_LIMIT_PER_MINUTE', 'MAX_TASKS_IN_FLIGHT_PER_ACCOUNT', 'MAX_REQUESTS_IN_FLIGHT', 'MAX_EVENT_LOOP_DELAY_MS', 'MAX_HEAP_USED_BYTES'];

describe('rate limit and load shedding settings', () => {
  it('are all off by default and read as whole numbers', () => {
    expect(loadConfig({})).toMatchObject({
      rateLimitPerMinute: 0,
      maxTasksInFlightPerAccount: 0,
      maxRequestsInFlight: 0,
      maxEventLoopDelayMs: 0,
      maxHeapUsedBytes: 0,
    });
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '600', MAX_TASKS_IN_FLIGHT_PER_ACCOUNT: '20', MAX_REQUESTS_IN_FLIGHT: '1000' })).toMatchObject({
      rateLimitPerMinute: 600,
      maxTasksInFlightPerAccount: 20,
      maxRequestsInFlight: 1000,
    });
  });

  it.each(LIMITS)('%s: a value that is not a whole number ≥ 0 is refused in one line naming it', (name) => {
    for (const bad of ['ten', '-1', '2.5']) {
      let message = '';
      try {
        loadConfig({ [name]: bad });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(new RegExp(`^invalid configuration: ${name}: must be (a whole number|0 \\(no limit\\) or more)`));
      expect(message).not.toContain('\n');
    }
  });
});
