import { describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { reflexInProcess } from '../cli/in-process.js';
import { rulesFolder, startReloadBed, startRule } from '../rules/support/reload-bed.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { writeRules } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

const probeFile = `import { defineProbe } from 'reflex-lxd';
export default [
  defineProbe({ name: 'web-health', scope: { filter: 'config.user.role eq web', projects: ['shop'] }, kind: 'http', url: '/healthz', port: 8080, periodMs: 5_000 }),
  defineProbe({ name: 'db-port', kind: 'tcp', port: 5432, host: '10.0.0.5' }),
];
`;

/** Issue #43 item 7: what the commands and the logs say of probes. */
describe('probes in the commands and logs', () => {
  const stopped = stoppedAfterEach();

  it('reflex probes list shows each probe’s scope and port', async () => {
    const run = await reflexInProcess(['probes', 'list', writeRules({ 'probes.ts': probeFile })]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('web-health  http /healthz port 8080  every 5000 ms');
    expect(run.stdout).toContain('  scope: projects shop; filter config.user.role eq web\n');
    expect(run.stdout).toContain('db-port  tcp port 5432 on 10.0.0.5');
    expect(run.stdout).toContain('  scope: every instance of every project and target\n');
  });

  it('reflex rules check and rules list name the probes', async () => {
    const dir = writeRules({ 'probes.ts': probeFile, 'heal.ts': startRule('heal') });
    const check = await reflexInProcess(['rules', 'check', dir]);
    expect(check.stdout).toContain('1 rule(s) valid: heal; 2 probe(s): web-health, db-port; 0 problem(s)');
    const list = await reflexInProcess(['rules', 'list', dir]);
    expect(list.stdout).toContain('probe web-health: http every 5000 ms');
    expect(list.stdout).toContain('probe db-port: tcp every 10000 ms');
  }, 60_000);

  it('a reload says how many probes it loaded and which came and went', async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal') });
    const { reflex, logs } = await bed.start(folder.dir);
    expect(logs.find((l) => String(l.msg).startsWith('loaded 1 rule(s)'))?.msg).toMatch(/and 0 probe\(s\)/);
    folder.write({ 'probes.ts': probeFile });
    const outcome = await reflex.reload!({ by: 'signal' });
    expect(outcome.result).toBe('reloaded');
    expect(outcome.summary).toContain('2 probe(s)');
    expect(outcome.summary).toContain('+probe web-health, +probe db-port');
    expect(outcome).toMatchObject({ rules: 1, probes: 2 });
  }, 60_000);

  it('reflex probes status filters by health, and says so, exit 1, when the prefix or instance has no probe state', async () => {
    const prefix = uniquePrefix('probe-status');
    const redis = redisClient();
    const state = (instance: string, health: string) =>
      JSON.stringify({ health, successes: 0, failures: 3, seq: 1, startedAt: 't', fingerprint: 'f', instance });
    await redis.hset(keySpace(prefix).probes.state, {
      'unix:///s|default|u1|config': state('web1', 'unhealthy'),
      'unix:///s|default|u2|config': state('web2', 'healthy'),
    });
    redis.disconnect();
    const env = { REDIS_URL: redisUrl() };
    const unhealthy = await reflexInProcess(['probes', 'status', '--prefix', prefix, '--health', 'unhealthy'], env);
    expect(unhealthy.code).toBe(0);
    expect(unhealthy.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^default\/web1 {2}config {2}unhealthy/)]);
    const wrong = await reflexInProcess(['probes', 'status', '--prefix', `${prefix}-typo`], env);
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toContain(`no probe state under prefix ${prefix}-typo`);
    const nobody = await reflexInProcess(['probes', 'status', '--prefix', prefix, '--instance', 'web9'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('no probe state for instance web9');
    const bad = await reflexInProcess(['probes', 'status', '--prefix', prefix, '--health', 'sick'], env);
    expect(bad.code).not.toBe(0);
  });
});
