import { describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { startStack } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { sleep, until } from '../support/wait.js';

const lines = (rs: StoredAuditRecord[]) => rs.map((r) => `${r.type}: ${r.summary}`).join('\n');

/**
 * Issue #43 item 2 on the simulator, end to end: a rule heals an unhealthy instance with a slow exec
 * and then a restart; the operator stops the instance while the exec runs. The stop is the
 * operator's: the restart is superseded, nothing is sent, refused or dead-lettered.
 */
describe('an operator’s stop during a probe heal’s exec (simulator)', () => {
  const stopped = stoppedAfterEach();

  it('is requested, and the rule’s pending restart is not sent', async () => {
    const stack = stopped(
      await startStack({
        redisUrl: redisUrl(),
        instances: [
          {
            name: 'web1',
            status: 'Running',
            config: { 'user.reflex.probe.exec': 'check-web', 'user.reflex.probe.period': '300ms', 'user.reflex.probe.failure-threshold': '2' },
          },
        ],
        rules: {
          'heal.ts': `import { defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'heal-service',
  on: { kind: 'instance.health', health: ['unhealthy'] },
  crashLoop: { maxRestarts: 5, windowMs: 600_000, initialBackoffMs: 0 },
  actions: [{ action: 'exec', params: { command: ['slow-fix'], timeout: '20s' } }, { action: 'restart' }],
});
`,
        },
      }),
    );
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1, stdout: 'down\n' }] });
    stack.sim.controls.scriptCommand({ command: 'slow-fix', outcomes: [{ delayMs: 3_000 }] });
    await until('the heal’s exec runs', () => (stack.sim.controls.commandCalls('web1', 'slow-fix') >= 1 ? true : undefined), 60_000);
    await (await stack.client.changeState('web1', { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    const trail = await waitForAudit(
      redisUrl(),
      stack.prefix,
      'web1',
      (rs) =>
        rs.some((r) => r.type === 'event' && /→ 102 \(/.test(String(r.summary))) &&
        rs.some((r) => /restart/.test(String(r.summary)) && r.type === 'outcome'),
      30_000,
    );
    await sleep(1_000);
    const after = await waitForAudit(redisUrl(), stack.prefix, 'web1', () => true);
    expect(String(after.find((r) => r.type === 'event' && /→ 102 \(/.test(String(r.summary)))!.summary), lines(after)).toMatch(/→ 102 \(requested/);
    expect(
      after.filter((r) => r.type === 'call' && /\/state/.test(String(r.summary))),
      lines(after),
    ).toEqual([]);
    expect(
      after.filter((r) => r.type === 'give-up'),
      lines(trail),
    ).toEqual([]);
    expect(stack.sim.controls.statusCode('web1')).toBe(102);
  }, 90_000);
});
