import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, crashInstance, deleteTestInstance, describeLxd, instanceStatus, launchTestInstance, lxdSocketPath, waitForStatus } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { startEventProxy, type EventProxy } from '../ingestion/support/event-proxy.js';

/**
 * Real LXD: the worker's event connection dies (cut by a proxy in front of the daemon's socket, so
 * only this worker is affected: restarting the shared daemon would disturb other suites), an
 * opted-in container crashes during the gap, and after the reconnect the resync finds it Stopped.
 * Nothing tells that crash from an operator's stop then, so Reflex does not guess: it records the
 * stop with intent unknown, raises an alert saying how to heal it, and leaves the container alone;
 * `reflex heal` then starts it as the operator's decision.
 */
await describeLxd('a crash while the event stream is down, on real LXD', () => {
  const prefix = uniquePrefix('e2e-gap');
  let proxy: EventProxy;
  let reflex: ReflexProcess;
  let name: string | undefined;

  beforeAll(async () => {
    proxy = await startEventProxy(lxdSocketPath()!);
    reflex = startReflexProcess(['run', '--target', `unix://${proxy.socketPath}`, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--resync-interval', '0', '--http-port', '0'], { REFLEX_LOG_LEVEL: 'info' });
    await reflex.waitForLog('reflex running');
    await reflex.waitForLog('event stream connected');
  });

  afterAll(async () => {
    await reflex?.stop();
    await proxy?.close();
    if (name) await deleteTestInstance(name);
  });

  it('is detected by the resync after the reconnect, alerted with how to heal it, and not started on a guess', async () => {
    name = await launchTestInstance({ config: { 'user.reflex.autorestart': 'true' } });
    await new Promise((r) => setTimeout(r, 2_500)); // the stream reported the start: Running is tracked
    proxy.refuse(true);
    proxy.cut();
    await crashInstance(name);
    await waitForStatus(name, STATUS_STOPPED, 2_000);
    await new Promise((r) => setTimeout(r, 1_500)); // instance-shutdown went out while nobody listened
    proxy.refuse(false);

    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'alert'), 20_000);
    const gap = trail.find((r) => r.type === 'event' && r.summary.includes('seen by resync') && r.summary.includes('103 → 102'));
    expect(gap?.summary, trail.map((r) => r.summary).join(' | ')).toContain('(unknown, seen by resync)');
    const incident = trail.filter((r) => r.correlationId === gap!.correlationId);
    expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'alert']);
    expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: false });
    expect(incident[2]!.summary).toContain(`${name} found Stopped after a gap, cause unknown: Reflex does not start it; to start it: reflex heal ${name}`);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await instanceStatus(name)).status_code, 'left alone').toBe(STATUS_STOPPED);

    const healed = await runReflex(['heal', name, '--target', `unix://${proxy.socketPath}`, '--redis', redisUrl(), '--prefix', prefix, '--wait', '30s']);
    expect(healed.code, healed.stderr).toBe(0);
    await waitForStatus(name, STATUS_RUNNING, 10_000);
  }, 60_000);
});
