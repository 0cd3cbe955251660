import { describe, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { runReflex, startReflexProcess } from '../support/reflex-process.js';
import { until } from '../support/wait.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { rulesFolder, startReloadBed, startRule } from '../rules/support/reload-bed.js';

const broken = `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'x', on: [ });\n`;

describe('reflex rules reload', () => {
  const stopped = stoppedAfterEach();

  it('reaches every replica holding rules and reports each: reloaded, or refused with file:line and a non-zero exit', async () => {
    const bed = stopped(await startReloadBed());
    const shared = rulesFolder({ 'heal.ts': startRule('heal-v1') });
    const own = rulesFolder({ 'heal.ts': startRule('heal-v1') });
    const one = await bed.start(shared.dir, { role: 'worker' });
    const two = await bed.start(own.dir, { role: 'worker' });
    const cli = ['rules', 'reload', '--redis', redisUrl(), '--prefix', bed.prefix, '--timeout', '20s'];

    shared.write({ 'heal.ts': startRule('heal-v2') });
    own.write({ 'heal.ts': startRule('heal-v2') });
    const ok = await runReflex(cli);
    expect(ok.code, ok.stderr).toBe(0);
    const lines = ok.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toMatch(/^\S+ \(worker\): reloaded: 1 rule\(s\), 0 schedule\(s\), 0 probe\(s\), 0 receiver\(s\)$/);
    expect([one, two].map((r) => r.reflex.ruleSet!.current.loaded.rules.map((x) => x.name))).toEqual([['heal-v2'], ['heal-v2']]);

    own.write({ 'broken.ts': broken });
    const refused = await runReflex([...cli, '--json']);
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout) as { answers: { result: string; errors?: string[] }[]; missing: string[] };
    expect(report.answers.map((a) => a.result).sort()).toEqual(['refused', 'reloaded']);
    expect(report.answers.find((a) => a.result === 'refused')!.errors![0]).toMatch(new RegExp(`${own.dir}/broken\\.ts:2:\\d+: `));
    expect(report.missing).toEqual([]);
    expect(refused.stderr).toMatch(/1 replica\(s\) refused the new rules and 0 did not answer; 1 reloaded/);
    expect(two.reflex.ruleSet!.current.generation).toBe(2);

    const records = await bed.reloads();
    expect(records.map((r) => `${r.by}:${r.result}`).sort()).toEqual(['cli:refused', 'cli:reloaded', 'cli:reloaded', 'cli:reloaded']);
  }, 120_000);

  it('exits non-zero when no replica holds rules', async () => {
    const bed = stopped(await startReloadBed());
    const res = await runReflex(['rules', 'reload', '--redis', redisUrl(), '--prefix', bed.prefix, '--timeout', '2s']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no running replica holds rules/);
  }, 60_000);

  it('SIGHUP reloads a running reflex run without stopping it; a broken folder is refused and the old rule keeps acting', async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal-v1') });
    bed.sim.controls.addInstance({ name: 'web1' });
    const proc = startReflexProcess([
      'run',
      '--target',
      `unix://${bed.sim.socketPath}`,
      '--redis',
      redisUrl(),
      '--rules',
      folder.dir,
      '--prefix',
      bed.prefix,
      '--http-port',
      '0',
    ]);
    stopped({ stop: async () => void (await proc.stop()) });
    await proc.waitForLog('reflex running');
    await proc.waitForLog('event stream connected', 20_000);
    await proc.waitForLog('subscriber lease acquired', 20_000);

    folder.write({ 'heal.ts': startRule('heal-v2'), 'broken.ts': broken });
    proc.child.kill('SIGHUP');
    const refused = await proc.waitForLog('rules reload refused', 30_000);
    expect(String(refused.msg)).toMatch(/broken\.ts:2:\d+: /);
    expect(proc.child.exitCode).toBeNull();
    bed.sim.controls.crash('web1');
    await until('web1 running again', () => bed.sim.controls.statusCode('web1') === 103, 30_000);
    let trail = await waitForAudit(redisUrl(), bed.prefix, 'web1', (rs) => rs.some((r) => r.type === 'outcome' && r.result === 'done'));
    expect(trail.filter((r) => r.type === 'action').map((r) => r.rule)).toEqual(['heal-v1']);

    folder.write({ 'broken.ts': undefined });
    proc.child.kill('SIGHUP');
    await proc.waitForLog('rules reloaded', 30_000);
    bed.sim.controls.crash('web1');
    trail = await waitForAudit(redisUrl(), bed.prefix, 'web1', (rs) => rs.filter((r) => r.type === 'outcome' && r.result === 'done').length >= 2);
    expect(trail.filter((r) => r.type === 'action').map((r) => r.rule)).toEqual(['heal-v1', 'heal-v2']);
    expect((await bed.reloads()).map((r) => `${r.by}:${r.result}`)).toEqual(['signal:refused', 'signal:reloaded']);
  }, 120_000);
});
