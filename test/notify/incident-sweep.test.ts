import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Alerts, openAlertsIn } from '../../src/alerts/alerts.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { isApiStatus } from '../../src/client/api-error.js';
import { parseTarget } from '../../src/client/target.js';
import { keySpace } from '../../src/redis/key-space.js';
import { sweepIncidents } from '../../src/notify/incident-sweep.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * The incident alerts a race left firing (a recovery or a delete handled before the crash's
 * alert was raised) end at the next sweep, whatever the order was; an instance still down keeps
 * its alert, and a crash raised since the sweep's read stays firing.
 */
describe('the incident sweep', () => {
  const redis = redisClient();
  const keys = keySpace(uniquePrefix('sweep'));
  const audit = new AuditLog(redis, keys.audit);
  const open = openAlertsIn(redis, keys.openAlerts);
  const alerts = new Alerts({ audit, open });
  let sim: RunningSimulator;
  let client: InstanceClient;
  let target: string;
  beforeAll(async () => {
    sim = await startSimulator({ instances: 0 });
    sim.controls.addInstance({ name: 'up-1', status: 'Running' });
    sim.controls.addInstance({ name: 'down-1', status: 'Stopped' });
    target = `unix://${sim.socketPath}`;
    client = new InstanceClient(parseTarget(target));
  });
  afterAll(async () => {
    await sim.stop();
    redis.disconnect();
  });

  const crashAlert = (instance: string, startsAt?: string) =>
    alerts.raise({
      kind: 'instance.crashed',
      severity: 'critical',
      target,
      project: 'default',
      instance,
      summary: `${instance} stopped`,
      correlationId: `c-${instance}`,
      ...(startsAt ? { startsAt } : {}),
    });
  const firing = async () => (await redis.hvals(keys.openAlerts)).map((raw) => JSON.parse(raw));
  const readInstance = async (ref: { instance: string }) =>
    await client.getInstance(ref.instance).then(
      (r) => r.value,
      (err: unknown) => (isApiStatus(err, 404) ? undefined : Promise.reject(err)),
    );

  it('ends the alerts of instances Running again or gone, audited, and keeps the one of an instance still down', async () => {
    await crashAlert('up-1');
    await crashAlert('gone-1');
    await crashAlert('down-1');
    expect(await sweepIncidents({ firing, kinds: ['instance.crashed'], readInstance, alerts })).toBe(2);
    expect((await firing()).map((a) => a.instance)).toEqual(['down-1']);
    const ends = (await audit.read({})).filter((r) => r.type === 'alert' && r.resolved === true);
    expect(ends.map((r) => [r.instance, r.outcome ?? (r as { summary: string }).summary])).toEqual(
      expect.arrayContaining([
        ['up-1', expect.stringMatching(/recovered|Running/)],
        ['gone-1', expect.stringMatching(/gone|404/)],
      ]),
    );
    expect(await sweepIncidents({ firing, kinds: ['instance.crashed'], readInstance, alerts }), 'nothing more to end').toBe(0);
  });

  it('ends only the episode it read: a crash raised since stays firing', async () => {
    await crashAlert('up-1', '2026-01-01T00:00:00.000Z');
    const stale = await firing();
    await alerts.resolveFiring('instance.crashed', { target, project: 'default', instance: 'up-1' }, { summary: 'x', outcome: 'recovered' });
    await crashAlert('up-1', '2026-01-01T00:00:09.000Z'); // a new crash, raised after the sweep read the list
    expect(await sweepIncidents({ firing: async () => stale, kinds: ['instance.crashed'], readInstance, alerts })).toBe(0);
    expect((await firing()).filter((a) => a.instance === 'up-1')).toHaveLength(1);
  });

  it('ends an alert whose first raise failed half-way (Redis refused the second write): the retry keeps it where the sweep finds it', async () => {
    let refuse = true;
    const flaky = {
      ...open,
      keep: async (alert: Parameters<typeof open.keep>[0]) => {
        if (refuse) throw new Error('OOM command not allowed when used memory > maxmemory');
        await open.keep(alert);
      },
    };
    const halfway = new Alerts({ audit, open: flaky });
    const raise = () =>
      halfway.raise(
        {
          kind: 'instance.crashed',
          severity: 'critical',
          target,
          project: 'default',
          instance: 'up-1',
          summary: 'up-1 stopped',
          correlationId: 'c-half',
        },
        { once: 'incident:half' },
      );
    await expect(raise()).rejects.toThrow(/OOM/);
    refuse = false;
    await raise(); // the event job's retry
    expect(await sweepIncidents({ firing, kinds: ['instance.crashed'], readInstance, alerts })).toBe(1);
    const trail = (await audit.read({ instance: 'up-1' })).filter((r) => r.correlationId === 'c-half');
    expect(trail.map((r) => (r.resolved === true ? 'resolved' : 'firing'))).toEqual(['firing', 'resolved']);
  });
});
