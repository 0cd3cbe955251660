import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { startStack } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

/** An http probe of /healthz on the simulator's guest port every 300 ms, and a rule restarting nginx when it is unhealthy. */
const probeAndRule = (port: number) => `import { defineProbe, defineRule } from 'reflex-lxd';
export default [
  defineProbe({ name: 'web-http', kind: 'http', url: '/healthz', port: ${port}, periodMs: 300, timeoutMs: 5_000, failureThreshold: 2 }),
  defineRule({
    name: 'heal-web',
    on: { kind: 'instance.health', health: ['unhealthy'], probe: ['web-http'] },
    crashLoop: { maxRestarts: 5, windowMs: 600_000, initialBackoffMs: 0 },
    actions: [{ action: 'exec', params: { command: ['systemctl', 'restart', 'nginx'], timeout: '5s' } }],
  }),
];
`;

const health = (r: StoredAuditRecord) => (r as { event?: { kind?: string; health?: string; previous?: string; output?: string } }).event;
const healthEvents = (rs: StoredAuditRecord[]) =>
  rs.filter((r) => r.type === 'event' && health(r)?.kind === 'instance.health').map((r) => `${health(r)!.previous}→${health(r)!.health}`);
const lines = (rs: StoredAuditRecord[]) => rs.map((r) => `${r.type}: ${r.summary}`).join('\n');

describe('an http probe heals a failing endpoint of a simulated instance', () => {
  const stopped = stoppedAfterEach();

  it('the endpoint starts answering 503, the probe turns unhealthy, the rule restarts nginx, which repairs it, and the probe turns healthy', async () => {
    const stack = stopped(await startStack({ redisUrl: redisUrl(), instances: [{ name: 'web1' }], rules: {}, reflex: false }));
    writeFileSync(join(stack.rulesDir, 'web.ts'), probeAndRule(stack.sim.guestPort));
    stack.sim.controls.scriptCommand({
      command: 'systemctl restart nginx',
      outcomes: [{ exitCode: 0, httpAfter: { path: '/healthz', outcomes: [{ status: 200, body: 'fine again' }] } }],
    });
    await stack.replica();
    // Healthy first (no event), then the service breaks on every instance.
    await until('a first probe of web1', () => stack.sim.controls.httpCalls('web1', { path: '/healthz' }) >= 1, 60_000);
    stack.sim.controls.scriptHttp({ path: '/healthz', outcomes: [{ status: 503, body: 'upstream down' }] });
    const trail = await waitForAudit(redisUrl(), stack.prefix, 'web1', (rs) => healthEvents(rs).includes('unhealthy→healthy'), 60_000);
    expect(healthEvents(trail), lines(trail)).toEqual(['healthy→unhealthy', 'unhealthy→healthy']);
    const unhealthy = trail.find((r) => health(r)?.health === 'unhealthy')!;
    expect(health(unhealthy)!.output).toMatch(/^GET http:\/\/127\.\d+\.\d+\.\d+:\d+\/healthz: 503 upstream down$/);
    const exec = trail.findIndex((r) => r.type === 'call' && (r as { action?: string }).action === 'exec');
    expect(exec, lines(trail)).toBeGreaterThan(trail.indexOf(unhealthy));
    expect(health(trail.find((r) => health(r)?.health === 'healthy')!)!.output).toMatch(/: 200 fine again$/);
    expect(stack.sim.controls.commandCalls('web1', 'systemctl restart nginx')).toBe(1);
  }, 120_000);
});
