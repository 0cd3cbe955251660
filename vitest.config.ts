import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real-daemon suites (LXD, Incus, the LXD cluster) share one daemon lock; they serialise
    // themselves through it (test/support/daemon-bed.ts). A vitest project of their own with
    // fileParallelism off was tried: vitest 4 runs such a project after the parallel one, not beside
    // it, which made the run longer (11 min of in-process suites, then the daemon suites one by one).
  },
});
