import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real-daemon suites hold their daemon's lock (test/support/daemon-bed.ts). `npm test`
    // (scripts/test.mjs) runs them as a vitest run of their own beside this config's run of the rest:
    // vitest 4 runs a second project after the first, not beside it, so the split is two processes.
  },
});
