import { describe, expect, it } from 'vitest';
import { probesOfConfig } from '../../src/probes/probe.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';
import { probeRunnerBed } from './probe-runner-bed.js';

/** What one instance's own probe keys may cost the fleet (issue #43 items 1 and 5). */
describe('one instance’s probe keys and the fleet', () => {
  const cleanups = cleanupsAfterEach();
  const fleet = Array.from({ length: 30 }, (_, i) => `idle${i}`);

  it('an instance probed every 250 ms is checked at its period, while the fleet is listed at the listing cadence, not at that period', async () => {
    const fast = { name: 'fast', config: { 'user.reflex.probe.exec': 'true', 'user.reflex.probe.period': '250ms' } };
    const { runner } = await probeRunnerBed(cleanups, [...fleet, fast], []);
    await until('fast checked once', () => (runner.counts.checks >= 1 ? true : undefined), 30_000);
    const listings = runner.counts.listings;
    const checks = runner.counts.checks;
    await until('fast checked six more times', () => (runner.counts.checks >= checks + 6 ? true : undefined), 30_000);
    // Six periods of 250 ms: the 10 s listing cadence has not come round again (main listed at 250 ms: 6 or 7 listings).
    expect(runner.counts.listings - listings).toBe(0);
  }, 60_000);

  it('refuses an instance’s period, timeout or startup grace outside sane bounds, and says which', () => {
    const { probes, problems } = probesOfConfig(
      {
        'user.reflex.probe.exec': 'true',
        'user.reflex.probe.period': '100ms',
        'user.reflex.probe.timeout': '10m',
        'user.reflex.probe.initial-delay': '2h',
      },
      [],
    );
    expect(probes.map((p) => [p.periodMs, p.timeoutMs, p.initialDelayMs])).toEqual([[10_000, 1_000, 0]]);
    expect(problems).toEqual([
      'user.reflex.probe.period: "100ms" is not a duration from 250 ms to 1 h',
      'user.reflex.probe.timeout: "10m" is not a duration from 100 ms to 60 s',
      'user.reflex.probe.initial-delay: "2h" is not a duration from 0 ms to 1 h',
    ]);
    expect(probesOfConfig({ 'user.reflex.probe.exec': 'true', 'user.reflex.probe.period': '250ms' }, []).probes[0]!.periodMs).toBe(250);
  });

  it('warns once of an instance key it cannot read, not at every listing, and again when the key changes', async () => {
    const odd = { name: 'odd', config: { 'user.reflex.probe.exec': 'true', 'user.reflex.probe.period': 'often' } };
    const { client, runner, warnings } = await probeRunnerBed(cleanups, ['plain', odd], [], { listEveryMs: 100 });
    const notUnderstood = () => warnings.filter((w) => String(w.msg).includes('not understood'));
    await until('five listings', () => (runner.counts.listings >= 5 ? true : undefined), 30_000);
    expect(notUnderstood()).toHaveLength(1);
    expect(notUnderstood()[0]).toMatchObject({
      instance: 'odd',
      problems: ['user.reflex.probe.period: "often" is not a duration from 250 ms to 1 h'],
    });
    await client.update('odd', (i) => ({ ...i, config: { ...i.config, 'user.reflex.probe.period': 'rarely' } }));
    await until('the changed key warned of', () => (notUnderstood().length === 2 ? true : undefined), 30_000);
    const listings = runner.counts.listings;
    await until('three more listings', () => (runner.counts.listings >= listings + 3 ? true : undefined), 30_000);
    expect(notUnderstood()).toHaveLength(2);
    expect(String((notUnderstood()[1]!.problems as string[])[0])).toContain('"rarely"');
  }, 60_000);
});
