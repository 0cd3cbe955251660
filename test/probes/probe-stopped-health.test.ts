import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { readProbeStatus } from '../../src/probes/probe-status.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';
import { probeRunnerBed } from './probe-runner-bed.js';

/** The gauge's counts by health for probe `config`. */
async function counts(metrics: Metrics): Promise<Record<string, number>> {
  const { values } = await metrics.probeInstances.get();
  return Object.fromEntries(values.filter((v) => v.labels.probe === 'config' && v.value > 0).map((v) => [String(v.labels.health), v.value]));
}

/** Issue #43 item 4: an instance an operator stopped is not probed, and its health is unknown, not its last run's. */
describe('the health of a stopped instance', () => {
  const cleanups = cleanupsAfterEach();

  it('is unknown in the gauge and in reflex probes status once stopped, and a replica that starts counts the same', async () => {
    const web1 = {
      name: 'web1',
      config: { 'user.reflex.probe.exec': 'check-web', 'user.reflex.probe.period': '250ms', 'user.reflex.probe.failure-threshold': '2' },
    };
    const metrics = new Metrics({ processMetrics: false });
    const { sim, client, redis, keys, runner, replica } = await probeRunnerBed(cleanups, [web1, 'plain'], [], { listEveryMs: 300, metrics });
    sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1, stdout: 'down\n' }] });
    const status = async () => (await readProbeStatus(redis, keys)).find((r) => r.instance === 'web1');
    await until('web1 unhealthy', async () => ((await status())?.health === 'unhealthy' ? true : undefined), 30_000);
    await until('the gauge counts it', async () => ((await counts(metrics)).unhealthy === 1 ? true : undefined), 30_000);

    // A replica started while it is unhealthy counts what the state says, not nothing.
    await runner.stop();
    const metrics2 = new Metrics({ processMetrics: false });
    const second = await replica({ metrics: metrics2 });
    await until('the new replica counts web1 unhealthy', async () => ((await counts(metrics2)).unhealthy === 1 ? true : undefined), 30_000);

    await (await client.changeState('web1', { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    await until('web1 unknown in the state', async () => ((await status())?.health === 'unknown' ? true : undefined), 30_000);
    expect(await status()).toMatchObject({ health: 'unknown', notRunning: 'Stopped', failures: 0 });
    await until('the gauge counts it unknown', async () => ((await counts(metrics2)).unknown === 1 ? true : undefined), 30_000);
    expect(await counts(metrics2)).toEqual({ unknown: 1 });

    // Another replica restart changes nothing while it stays stopped.
    await second.stop();
    const metrics3 = new Metrics({ processMetrics: false });
    const third = await replica({ metrics: metrics3 });
    await until('a listing by the third replica', () => (third.counts.listings >= 2 ? true : undefined), 30_000);
    await until('the third replica’s gauge', async () => (Object.keys(await counts(metrics3)).length ? true : undefined), 30_000);
    expect(await counts(metrics3)).toEqual({ unknown: 1 });
    expect((await status())?.health).toBe('unknown');
  }, 90_000);
});
