import { describe, expect, it } from 'vitest';
import { EventArchive } from '../../src/events/event-archive.js';
import { defineProbe, type Probe } from '../../src/probes/probe.js';
import type { ProbeRunnerOptions } from '../../src/probes/probe-runner.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';
import { probeRunnerBed } from './probe-runner-bed.js';

describe('the probe runner’s upkeep', () => {
  const cleanups = cleanupsAfterEach();

  const runnerOn = (names: string[], probes: Probe[], opts: Partial<ProbeRunnerOptions> = {}) => probeRunnerBed(cleanups, names, probes, opts);

  it('forgets the state of an instance that is gone once its last check is older than forgetAfterMs, and keeps the others’', async () => {
    const probe = defineProbe({ name: 'p', kind: 'exec', command: ['true'], periodMs: 100, timeoutMs: 5_000 });
    const { client, probedInstances } = await runnerOn(['kept', 'gone'], [probe], { forgetAfterMs: 600, listEveryMs: 250 });
    await until('both instances probed', async () => ((await probedInstances()).length === 2 ? true : undefined), 30_000);
    await (await client.changeState('gone', { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    await (await client.deleteInstance('gone')).wait({ timeoutMs: 20_000 });
    await until('the deleted instance’s state forgotten', async () => ((await probedInstances()).length === 1 ? true : undefined), 30_000);
    expect(await probedInstances()).toEqual(['kept']);
  }, 90_000);

  it('stays out of the roster while no instance has a probe, and joins when an operator opts one in with its config', async () => {
    const { client, redis, keys, probedInstances } = await runnerOn(['web1'], [], { listEveryMs: 250 });
    await until(
      'the replica out of the roster after its first listing',
      async () => ((await redis.zcard(keys.probes.roster)) === 0 ? true : undefined),
      30_000,
    );
    await client.update('web1', (i) => ({ ...i, config: { ...i.config, 'user.reflex.probe.exec': 'true', 'user.reflex.probe.period': '250ms' } }));
    await until('web1 probed', async () => ((await probedInstances()).includes('web1') ? true : undefined), 30_000);
    expect(await redis.zcard(keys.probes.roster)).toBe(1);
  }, 90_000);

  it('lists an idle fleet without probes once a minute, and again as soon as the folder’s probes change or an event is archived', async () => {
    const folder: Probe[] = [];
    const { sim, client, redis, keys, runner, probedInstances } = await runnerOn(['web1'], folder, { listEveryMs: 200, quietListEveryMs: 60_000 });
    /** Waits for three passes, each past the 200 ms cadence, and says how many listings there were by then. */
    const listingsAfterThreePasses = async () => {
      const passes = runner.counts.passes;
      await until('three more passes', () => (runner.counts.passes >= passes + 3 ? true : undefined), 30_000);
      return runner.counts.listings;
    };
    await until('the first listing', () => (runner.counts.listings === 1 ? true : undefined), 30_000);
    expect(await listingsAfterThreePasses(), 'nothing could have given an instance a probe: no listing').toBe(1);

    // A reload brings a folder probe, in scope of no instance here: listed for at once, then quiet again.
    folder.push(defineProbe({ name: 'elsewhere', kind: 'exec', command: ['true'], periodMs: 200, timeoutMs: 5_000, scope: { projects: ['other'] } }));
    await until('a listing for the folder’s new probe', () => (runner.counts.listings === 2 ? true : undefined), 30_000);
    expect(await listingsAfterThreePasses()).toBe(2);

    // An operator opts web1 in: the daemon announces it, and the worker archives the announcement.
    await client.update('web1', (i) => ({ ...i, config: { ...i.config, 'user.reflex.probe.exec': 'true', 'user.reflex.probe.period': '250ms' } }));
    const at = { target: `unix://${sim.socketPath}`, location: 'none', project: 'default', timestamp: new Date().toISOString(), synthetic: false };
    await new EventArchive({ redis, key: keys.archive }).append(
      { kind: 'lifecycle', id: 'web1-updated', ...at, action: 'instance-updated', source: '/1.0/instances/web1', instance: 'web1' },
      'processed',
    );
    await until('web1 probed', async () => ((await probedInstances()).includes('web1') ? true : undefined), 30_000);
  }, 90_000);

  it('says in the log, once while the reason stays the same, that a check could not run', async () => {
    const probe = defineProbe({ name: 'p', kind: 'exec', command: ['true'], periodMs: 100, timeoutMs: 5_000 });
    const { sim, runner, warnings } = await runnerOn(['web1'], [probe]);
    sim.controls.failNext('web1', 20, 'Injected failure');
    const cannotRun = () => warnings.filter((w) => String(w.msg).includes('could not run'));
    await until('the check that could not run logged', () => (cannotRun().length > 0 ? true : undefined), 30_000);
    const after = runner.counts.checks;
    await until('five more checks', () => (runner.counts.checks >= after + 5 ? true : undefined), 30_000);
    expect(cannotRun()[0]).toMatchObject({ probe: 'p', instance: 'web1' });
    expect(String(cannotRun()[0]!.output)).toMatch(/^exec refused: /);
    expect(cannotRun()).toHaveLength(1);
  }, 90_000);
});
