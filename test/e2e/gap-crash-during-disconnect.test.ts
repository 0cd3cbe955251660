import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, describeEachBed, incusBed, lxdBed, startReflexOn, type DaemonBed } from '../support/daemon-bed.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { startEventProxy, type EventProxy } from '../ingestion/support/event-proxy.js';
import { runningTracked, show, startCallsSince } from '../remediation/trail.js';

/**
 * An opted-in container crashes while Reflex cannot hear it, and the resync that follows finds it
 * Stopped. Nothing tells that crash from an operator's stop then, so Reflex does not guess: it
 * records the stop with intent unknown, raises an alert saying how to heal it, and leaves the
 * container alone; `reflex heal` then starts it as the operator's decision. Two ways to be deaf, each
 * written for any daemon: the event connection cut (run on LXD) and Reflex stopped (run on Incus).
 */
const optIn = { 'user.reflex.autorestart': 'true' };

/** The stop found by the resync: recorded as unknown, decided on, alerted, and nothing started. */
async function expectLeftAloneAndAlerted(bed: DaemonBed, prefix: string, name: string): Promise<void> {
  const alerted = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'alert'), 20_000);
  const gap = alerted.find((r) => r.type === 'event' && r.summary.includes('seen by resync') && r.summary.includes('103 → 102'));
  expect(gap?.summary, show(alerted)).toContain('(unknown, seen by resync)');
  const incident = alerted.filter((r) => r.correlationId === gap!.correlationId);
  expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'alert']);
  expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: false });
  expect(incident[2]!.summary).toContain(
    `${name} found Stopped after a gap, cause unknown: Reflex does not start it; to start it: reflex heal ${name}`,
  );
  // The alert is the incident's last record: the rules have decided, and queued nothing.
  const trail = await auditTrail(redisUrl(), prefix, name);
  expect((await bed.status(name)).status_code, `left alone\n${show(trail)}`).toBe(STATUS_STOPPED);
  expect(startCallsSince(trail), show(trail)).toEqual([]);
}

await describeEachBed(
  'a crash while the event stream is down',
  (bed) => {
    const prefix = uniquePrefix('e2e-gap');
    let proxy: EventProxy;
    let reflex: ReflexProcess;
    let name: string | undefined;

    // The connection is cut by a proxy in front of the daemon's socket, so only this Reflex is affected:
    // restarting the shared daemon would disturb other suites.
    beforeAll(async () => {
      proxy = await startEventProxy(bed.socket);
      reflex = startReflexProcess(
        ['run', ...reflexArgs(prefix, `unix://${proxy.socketPath}`), '--rules', 'rules', '--resync-interval', '0', '--http-port', '0'],
        { REFLEX_LOG_LEVEL: 'info' },
      );
      await reflex.waitForLog('reflex running');
      await reflex.waitForLog('event stream connected');
    });

    afterAll(async () => {
      await reflex?.stop();
      await proxy?.close();
      if (name) await bed.remove(name);
    });

    it('is detected by the resync after the reconnect, alerted with how to heal it, and not started on a guess', async () => {
      const monitor = bed.monitor();
      try {
        await monitor.listening();
        name = await bed.launch({ config: optIn });
        await runningTracked(redisUrl(), prefix, name);
        proxy.refuse(true);
        proxy.cut();
        await bed.crash(name);
        await bed.waitForStatus(name, STATUS_STOPPED, 2_000);
        await monitor.heard(name, 'instance-shutdown'); // went out while Reflex did not listen
      } finally {
        monitor.stop();
      }
      proxy.refuse(false);

      await expectLeftAloneAndAlerted(bed, prefix, name);

      const healed = await runReflex(['heal', name, ...reflexArgs(prefix, `unix://${proxy.socketPath}`), '--wait', '30s']);
      expect(healed.code, healed.stderr).toBe(0);
      await bed.waitForStatus(name, STATUS_RUNNING, 10_000);
    }, 60_000);
  },
  [lxdBed],
);

await describeEachBed(
  'a crash while Reflex is stopped',
  (bed) => {
    it('is found by the resync on restart with intent unknown, alerted, and left stopped', async () => {
      const prefix = uniquePrefix('e2e-gap-stopped');
      let reflex = startReflexOn(bed, redisUrl(), prefix);
      let name: string | undefined;
      const monitor = bed.monitor();
      try {
        await reflex.waitForLog('event stream connected');
        await monitor.listening();
        name = await bed.launch({ config: optIn });
        await runningTracked(redisUrl(), prefix, name);
        await reflex.stop();

        await bed.crash(name);
        await bed.waitForStatus(name, STATUS_STOPPED, 5_000);
        await monitor.heard(name, 'instance-shutdown'); // went out while no Reflex ran

        reflex = startReflexOn(bed, redisUrl(), prefix);
        await reflex.waitForLog('event stream connected');
        await expectLeftAloneAndAlerted(bed, prefix, name);
      } finally {
        monitor.stop();
        await reflex.stop();
        if (name) await bed.remove(name);
      }
    }, 90_000);
  },
  [incusBed],
);
