import { defineConfig } from 'vitest/config';
import LongFirstSequencer from './test/support/long-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/reliability-summary.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `gc()` for tests of what a garbage collection in the middle of a call must not break
    // (test/engine/upstream-http-deadline.int.test.ts).
    execArgv: ['--expose-gc'],
    // Two files at a time on the 2-core CI machine (vitest's default is one fewer than the cores:
    // one). Most files wait on timers, brokers and child processes more than they compute; one at
    // a time the suite took 25.6 minutes of CI's 30 (1,367 s of tests, 1,536 s wall).
    maxWorkers: 2,
    // The longest files first (test/support/long-first-sequencer.ts): the simulation slice last
    // ran alone at the end of CI's run.
    sequence: { sequencer: LongFirstSequencer },
    // Answers must match their routes' declared response schemas (src/http/response-serializer.ts).
    env: { RESPONSE_SCHEMAS: 'strict' },
  },
});
