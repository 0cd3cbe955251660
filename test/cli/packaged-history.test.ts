import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusCode } from '../../src/client/status-code.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { optIn } from '../support/stack.js';
import { until } from '../support/wait.js';

/**
 * The packaged layout end to end: `reflex run` as the unit runs it (its settings in one config file,
 * its state directory in STATE_DIRECTORY, nothing about history in its environment) ships the
 * audit trail to the files store; `reflex audit --instance` from an operator's shell elsewhere,
 * with that file alone, shows the records Redis no longer holds.
 */
describe('reflex audit on a packaged install, from a plain shell', () => {
  const redis = redisClient();
  const prefix = uniquePrefix('packaged');
  const root = mkdtempSync(join(resolve('.tmp'), 'packaged-'));
  const stateDir = join(root, 'var-lib-reflex');
  const configFile = join(root, 'config.json');
  let sim: RunningSimulator;
  let service: ReflexProcess;

  beforeAll(async () => {
    sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopMs: 100, stopHookMs: 100, taskMs: 20 } });
    sim.controls.addInstance({ name: 'web-1', config: optIn });
    sim.controls.addInstance({ name: 'web-2', config: optIn });
    writeFileSync(
      configFile,
      JSON.stringify({
        target: `unix://${sim.socketPath}`,
        redisUrl: redisUrl(),
        prefix,
        rulesDir: resolve('rules'),
        typecheckRules: false,
        httpPort: 0,
        resyncIntervalMs: 0,
        // The Redis window is short, so what the shell shows of the first crash comes from the store.
        auditMaxRecords: 3,
        history: { store: 'files', dir: join(stateDir, 'history'), shipIntervalMs: 200 },
      }),
    );
    service = startReflexProcess(['run', '--config', configFile], {
      STATE_DIRECTORY: stateDir,
      REFLEX_HISTORY_STORE: '',
      REFLEX_HISTORY_DIR: '',
      REDIS_URL: '',
      REFLEX_PREFIX: '',
      REFLEX_LOG_LEVEL: 'info',
    });
    await service.waitUntilWatching();
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await sim?.stop();
    redis.disconnect();
    rmSync(root, { recursive: true, force: true });
  });

  it('shows the records of an instance that only the history store still holds', async () => {
    const key = keySpace(prefix).audit;
    const firstOfWeb1 = async () => (await redis.xrange(key, '-', '+')).find(([, f]) => f.some((v) => v.includes('"web-1"')))?.[0];
    sim.controls.crash('web-1');
    const firstId = await until('the crash is audited', firstOfWeb1, 15_000);
    // Healed, shipped, then trimmed out of Redis by the records of what came after.
    await until('web-1 restarted', async () => sim.controls.statusCode('web-1') === StatusCode.Running, 15_000);
    sim.controls.crash('web-2');
    await until("the crash's first record gone from Redis", async () => (await redis.xrange(key, firstId, firstId)).length === 0, 20_000);

    const shell = await runReflex(
      ['audit', '--instance', 'web-1', '--json', '--config', configFile],
      {
        STATE_DIRECTORY: '',
        XDG_STATE_HOME: join(root, 'operator-home-state'),
        REDIS_URL: '',
        REFLEX_PREFIX: '',
        REFLEX_HISTORY_STORE: '',
        REFLEX_HISTORY_DIR: '',
      },
      { cwd: root },
    );
    expect(shell.stderr).toBe('');
    expect(shell.code).toBe(0);
    const ids = shell.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids[0]).toBe(firstId);
    expect(ids.length).toBeGreaterThan(3);
  }, 60_000);
});
