import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/reliability-summary.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Answers must match their routes' declared response schemas (src/http/response-serializer.ts).
    env: { RESPONSE_SCHEMAS: 'strict' },
  },
});
