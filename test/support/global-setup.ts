import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import type { TestProject } from 'vitest/node';
import { startRedisTopology, topologyFromEnv, type RedisTopology, type TopologyKind } from './redis-topology.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** The set-up behind redisUrl: a single Redis (default), a 6-node Redis Cluster or a Sentinel set-up (REFLEX_TEST_REDIS). */
    redisTopology: TopologyKind;
  }
}

let redis: RedisTopology | undefined;

/**
 * Tests that start `reflex` as a user would run bin/reflex.js, which runs the compiled dist/:
 * compile the current source first (incremental, a few seconds), so no test runs stale code.
 */
function buildDist(): void {
  // scripts/build.mjs (`npm run build`): the compiler only when dist/ is not current.
  const run = spawnSync(process.execPath, ['scripts/build.mjs'], { encoding: 'utf8' });
  if (run.status !== 0)
    process.stderr.write(`global-setup: npm run build exited ${run.status}; dist/ was emitted anyway:\n${run.stdout.slice(0, 2000)}${run.stderr}`);
  if (!existsSync('dist/cli/entry.js')) throw new Error('global-setup: npm run build did not produce dist/cli/entry.js');
}

/**
 * Builds dist/, then the Redis for the whole test run, unless REDIS_URL points at one: one private
 * redis-server, or with REFLEX_TEST_REDIS=cluster|sentinel a real Redis Cluster or Sentinel set-up.
 */
export async function setup(project: TestProject): Promise<void> {
  // `npm test` (scripts/test.mjs) builds once for its two runs.
  if (process.env.REFLEX_TEST_DIST_BUILT !== '1') buildDist();
  isolateState();
  const kind = topologyFromEnv();
  project.provide('redisTopology', kind);
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return;
  }
  redis = await startRedisTopology(kind);
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}

let stateDir: string | undefined;

/**
 * A Reflex that names no history folder writes its files history store under the state folder
 * (src/config/history-dir.ts): for this test run, a fresh one under .tmp/ (the test files and the
 * `reflex` processes they start inherit it), never a system folder or the user's own.
 */
function isolateState(): void {
  mkdirSync('.tmp', { recursive: true });
  stateDir = mkdtempSync(resolve('.tmp', 'state-'));
  process.env.XDG_STATE_HOME = stateDir;
  delete process.env.STATE_DIRECTORY;
}
