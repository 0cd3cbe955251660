import { defineConfig } from 'vitest/config';
import { daemonTestFiles } from './test/support/daemon-files.js';

// The suites on a real daemon (LXD, Incus, the LXD cluster) hold one cross-process lock while they
// run (test/support/lxd-bed.ts). In a project of their own they run one at a time beside the rest,
// instead of a second worker waiting on the lock while in-process suites queue behind it.
const daemon = daemonTestFiles();
const common = { pool: 'forks' as const, testTimeout: 60_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    // Once for the whole run, whatever the projects: builds dist/ and starts the run's Redis.
    globalSetup: ['test/support/global-setup.ts'],
    // Two in-process workers (the machine CI runs on has two cores) and the daemon suites' one.
    maxWorkers: 3,
    projects: [
      { test: { ...common, name: 'local', include: ['test/**/*.test.ts'], exclude: daemon, maxWorkers: 2 } },
      { test: { ...common, name: 'daemon', include: daemon, fileParallelism: false } },
    ],
  },
});
