import { describe, expect, it } from 'vitest';
import { redisUrl } from '../support/redis.js';
import { startStack } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

// The probes spread over the replicas by a hash of ids that hold random parts: with 8 of them, all
// went to one replica in about 1 run in 128 and the test waited for the other in vain; 16 make it 1 in 32768.
const names = Array.from({ length: 16 }, (_, i) => `a${i + 1}`);
const probed = (name: string) => ({
  name,
  status: 'Running' as const,
  config: { 'user.reflex.probe.exec': 'check-web', 'user.reflex.probe.period': '400ms' },
});
const noRule = {
  'noop.ts': `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'noop', on: { kind: 'rule.event', name: ['never'] }, actions: [{ action: 'notify' }] });\n`,
};

describe('health probes over two replicas (simulator)', () => {
  const stopped = stoppedAfterEach();

  it('each probe runs on one replica at a time, and a stopped replica’s probes continue on the other', async () => {
    const stack = stopped(await startStack({ redisUrl: redisUrl(), instances: names.map(probed), rules: noRule }));
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ stdout: 'ok\n' }] });
    const a = stack.reflex.probes!;
    const b = (await stack.replica()).probes!;
    const calls = () => names.reduce((n, name) => n + stack.sim.controls.commandCalls(name, 'check-web'), 0);
    // Both replicas run checks: the probes are spread.
    await until('both replicas check', () => (a.counts.checks >= 8 && b.counts.checks >= 8 ? true : undefined), 120_000);
    // No check ran twice: every call of the command is one replica's check (a check in flight may not be counted yet).
    const total = a.counts.checks + b.counts.checks;
    expect(Math.abs(calls() - total)).toBeLessThanOrEqual(names.length);
    const before = Object.fromEntries(names.map((n) => [n, stack.sim.controls.commandCalls(n, 'check-web')]));
    await b.stop();
    const bBefore = b.counts.checks;
    // Every instance is checked again, all by the replica left.
    await until(
      'every instance checked twice more by the replica left',
      () => (names.every((n) => stack.sim.controls.commandCalls(n, 'check-web') >= before[n]! + 2) ? true : undefined),
      120_000,
    );
    expect(b.counts.checks).toBe(bBefore);
  }, 360_000);
});
