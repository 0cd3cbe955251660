import { afterAll, expect, it, describe } from 'vitest';
import { startSimulator } from '../../src/simulator/simulator.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess } from '../support/reflex-process.js';

describe('dry-run', () => {
  it('a dry-run rule records what it would call and sends no mutating request', async () => {
    const sim = await startSimulator({ instances: 0, timings: { startMs: 30, stopHookMs: 50 } });
    sim.controls.addInstance({ name: 'd1' });
    const prefix = uniquePrefix('dry');
    const reflex = startReflexProcess(
      [
        'run',
        ...reflexArgs(prefix, `unix://${sim.socketPath}`),
        '--rules',
        'test/fixtures/rules-dry-run',
        '--resync-interval',
        '0',
        '--http-port',
        '0',
      ],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    try {
      await reflex.waitForLog('event stream connected');
      sim.controls.crash('d1');
      const trail = await waitForAudit(redisUrl(), prefix, 'd1', (rs) => rs.some((r) => r.type === 'outcome'));
      expect(trail.find((r) => r.type === 'decision')!.summary).toBe('matched (dry-run)');
      expect(trail.find((r) => r.type === 'outcome')).toMatchObject({
        result: 'dry-run',
        summary: 'start: would PUT /1.0/instances/d1/state?project=default (start)',
      });
      expect(sim.controls.calls('d1')).toBe(0);
      expect(sim.controls.statusCode('d1')).toBe(102);
    } finally {
      await reflex.stop();
      await sim.stop();
    }
  }, 90_000);
});

describe('reflex replay', () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const s of stops.reverse()) await s();
  });

  it('lists the same actions the run took, and sends no mutating request', async () => {
    const sim = await startSimulator({ instances: 0, timings: { startMs: 30, stopHookMs: 50 } });
    stops.push(() => sim.stop());
    for (const name of ['a1', 'a2']) sim.controls.addInstance({ name, config: { 'user.reflex.autorestart': 'true' } });
    sim.controls.addInstance({ name: 'b1', config: {} });
    const prefix = uniquePrefix('replay');
    const common = ['--target', `unix://${sim.socketPath}`, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules'];
    const reflex = startReflexProcess(['run', ...common, '--resync-interval', '0', '--http-port', '0'], { REFLEX_LOG_LEVEL: 'info' });
    stops.push(() => reflex.stop());
    await reflex.waitForLog('event stream connected');
    for (const name of ['a1', 'a2', 'b1']) sim.controls.crash(name);
    for (const name of ['a1', 'a2']) await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    await waitForAudit(redisUrl(), prefix, 'b1', (rs) => rs.some((r) => r.type === 'decision'));
    await reflex.stop();

    const before = JSON.stringify(sim.controls.callCounts());
    const res = await runReflex(['replay', '--since', '1h', '--json', ...common]);
    expect(res.code, res.stderr).toBe(0);
    const row = res.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { rule: string; wouldDo: string[]; didDo: string[] })
      .find((r) => r.rule === 'restart-on-crash')!;
    expect(row.didDo.sort()).toEqual(['a1: start', 'a2: start']);
    expect(row.wouldDo.sort()).toEqual(row.didDo.sort());
    expect(JSON.stringify(sim.controls.callCounts()), 'no mutating call reached the server').toBe(before);
  }, 90_000);
});
