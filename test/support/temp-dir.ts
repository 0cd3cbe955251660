import { rm } from 'node:fs/promises';
import { afterAll } from 'vitest';

/**
 * How long removing a test's installation may take: an npm installation's tens of thousands of
 * files took 5.5 s to remove on an idle machine and over a minute (the default hook bound) while
 * CI's other suites loaded the two cores and the disk.
 */
const REMOVE_TREE_MS = 600_000;

/**
 * Removes `dir` once the file's tests have run, without blocking the worker's event loop (a
 * synchronous removal ran past the hook's bound, and vitest fails a hook that returns late even
 * when nothing in it failed). The bound only limits how long a stuck removal can take.
 */
export function removedAfterAll(dir: string): void {
  afterAll(() => rm(dir, { recursive: true, force: true }), REMOVE_TREE_MS);
}
