import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import type { ConfigInput } from '../../src/config/config.js';
import { freePort } from '../support/free-port.js';
import { redisUrl } from '../support/redis.js';
import { startStack, type StackParts } from '../support/stack.js';
import { until } from '../support/wait.js';
import { rulesFolder, startRule } from '../rules/support/reload-bed.js';

/**
 * Each role runs its own composition root, and /readyz checks what that root runs: the subscriber
 * its reader and the events queue it feeds, the worker its workers and the events and actions
 * queues it consumes, the scheduler the actions queue it feeds and its schedules queue; a process
 * of every role checks each queue once. In-process Reflex on the simulator, real Redis.
 */
type Report = { status: string; checks: Record<string, { ok: boolean; detail: string }> };

let stack: StackParts;
/** The worker's history store (its /readyz checks it): files, in a folder of the test's own. */
let historyDir: string;

beforeEach(async () => {
  historyDir = mkdtempSync(join(tmpdir(), 'reflex-roots-history-'));
  stack = await startStack({
    redisUrl: redisUrl(),
    instances: [{ name: 'web-1', config: { 'user.reflex.autorestart': 'true' } }],
    rules: 'test/fixtures/rules-crash-loop',
    label: 'roots',
    reflex: false,
  });
});

afterEach(async () => {
  await stack.stop();
  rmSync(historyDir, { recursive: true, force: true });
});

/** Reflex of one role on the stack (its simulator and key prefix), serving /readyz. */
async function start(role: ConfigInput['role'], over: Partial<ConfigInput> = {}): Promise<ReflexHandle> {
  return stack.replica({ role, httpPort: await freePort(), history: { store: 'files', dir: historyDir }, ...over });
}

async function checksOf(reflex: ReflexHandle): Promise<string[]> {
  const res = await fetch(`${reflex.http!.url}/readyz`);
  return Object.keys(((await res.json()) as Report).checks).sort();
}

describe('a composition root per role (simulator, real Redis)', () => {
  it('a subscriber reads the target and holds no rules; /readyz checks its reader and the events queue it feeds', async () => {
    const reflex = await start('subscriber');
    expect(reflex.readers.map((r) => r.id)).toEqual([reflex.target]);
    expect(reflex.ruleSet).toBeUndefined();
    expect(reflex.reload).toBeUndefined();
    await until('the lease held and the stream open', () => reflex.lease?.isHeld && reflex.subscriber?.connected);
    expect(await checksOf(reflex)).toEqual(['queue:events', 'redis', 'redis-writes', 'subscriber']);
  });

  it('a worker reads no stream; /readyz checks its workers, the events and actions queues it consumes and the history store it ships to', async () => {
    const reflex = await start('worker');
    expect(reflex.readers).toEqual([]);
    expect(reflex.subscriber).toBeUndefined();
    expect(reflex.reload).toBeTypeOf('function');
    expect(await checksOf(reflex)).toEqual(['history', 'queue:actions', 'queue:events', 'redis', 'redis-writes', 'workers']);
  });

  it('a scheduler reads no stream and runs no worker; /readyz checks the actions queue it feeds and its schedules queue', async () => {
    const reflex = await start('scheduler');
    expect(reflex.readers).toEqual([]);
    expect(reflex.ruleSet).toBeDefined();
    expect(await checksOf(reflex)).toEqual(['queue:actions', 'queue:schedules', 'redis', 'redis-writes']);
  });

  it('a process of every role runs the three roots and checks each queue once', async () => {
    const reflex = await start('all');
    expect(reflex.readers).toHaveLength(1);
    expect(await checksOf(reflex)).toEqual([
      'history',
      'queue:actions',
      'queue:events',
      'queue:schedules',
      'redis',
      'redis-writes',
      'subscriber',
      'workers',
    ]);
  });

  it('the role that sends opens the notifier: a worker with receivers checks its queues and keeps notifying across reloads; a scheduler or subscriber opens none', async () => {
    const receivers = `import { defineNotifications } from 'reflex-lxd';
export default defineNotifications({ receivers: [{ kind: 'slack', name: 'ops', url: 'http://127.0.0.1:9/hook' }], route: { receiver: 'ops' } });
`;
    const folder = rulesFolder({ 'heal.ts': startRule('heal'), 'receivers.ts': receivers });
    const worker = await start('worker', { rulesDir: folder.dir });
    const scheduler = await start('scheduler', { rulesDir: folder.dir });
    const subscriber = await start('subscriber', { rulesDir: folder.dir });
    expect(await checksOf(worker)).toEqual([
      'history',
      'queue:actions',
      'queue:deliveries',
      'queue:events',
      'queue:flush',
      'redis',
      'redis-writes',
      'workers',
    ]);
    expect(await checksOf(scheduler)).toEqual(['queue:actions', 'queue:schedules', 'redis', 'redis-writes']);
    expect(subscriber.ruleSet).toBeUndefined();
    folder.write({ 'receivers.ts': undefined });
    expect((await worker.reload!({ by: 'signal' })).summary).toMatch(
      /no notification receiver is defined any more but this process started with some/,
    );
    expect((await scheduler.reload!({ by: 'signal' })).result).toBe('reloaded');
  });

  it('a stopped subscriber gives its lease up at once, for another replica to take', async () => {
    const reflex = await start('subscriber');
    const lease = stack.keys.lease(reflex.target);
    await until('the lease held', async () => reflex.lease?.isHeld && (await stack.redis.exists(lease)) === 1);
    await reflex.stop();
    expect(await stack.redis.exists(lease)).toBe(0);
  });
});
