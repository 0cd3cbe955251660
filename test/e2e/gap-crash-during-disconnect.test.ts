import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, crashInstance, deleteTestInstance, describeLxd, launchTestInstance, lxdSocketPath, waitForStatus } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { startEventProxy, type EventProxy } from '../ingestion/support/event-proxy.js';

/**
 * Real LXD: the worker's event connection dies (cut by a proxy in front of the daemon's socket, so
 * only this worker is affected: restarting the shared daemon would disturb other suites), an
 * opted-in container crashes during the gap, and after the reconnect the resync finds it and the
 * bundled rule starts it again.
 */
await describeLxd('a crash while the event stream is down, on real LXD', () => {
  const prefix = uniquePrefix('e2e-gap');
  let proxy: EventProxy;
  let reflex: ReflexProcess;
  let name: string | undefined;

  beforeAll(async () => {
    proxy = await startEventProxy(lxdSocketPath()!);
    reflex = startReflexProcess(['run', '--target', `unix://${proxy.socketPath}`, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--resync-interval', '0'], { REFLEX_LOG_LEVEL: 'info' });
    await reflex.waitForLog('reflex running');
    await reflex.waitForLog('event stream connected');
  });

  afterAll(async () => {
    await reflex?.stop();
    await proxy?.close();
    if (name) await deleteTestInstance(name);
  });

  it('is detected by the resync after the reconnect and remediated by restart-on-crash', async () => {
    name = await launchTestInstance({ config: { 'user.reflex.autorestart': 'true' } });
    await new Promise((r) => setTimeout(r, 2_500)); // the stream reported the start: Running is tracked
    proxy.refuse(true);
    proxy.cut();
    await crashInstance(name);
    await waitForStatus(name, STATUS_STOPPED, 2_000);
    await new Promise((r) => setTimeout(r, 1_500)); // instance-shutdown went out while nobody listened
    proxy.refuse(false);
    await waitForStatus(name, STATUS_RUNNING, 20_000);

    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    const gap = trail.find((r) => r.type === 'event' && r.summary.includes('seen by resync') && r.summary.includes('103 → 102'));
    expect(gap, `synthetic crash event in ${trail.map((r) => r.summary).join(' | ')}`).toBeDefined();
    const incident = trail.filter((r) => r.correlationId === gap!.correlationId);
    expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'action', 'call', 'outcome']);
    expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: true });
    expect(incident[4]).toMatchObject({ result: 'done' });
    expect(trail.filter((r) => r.type === 'outcome')).toHaveLength(1);
  });
});
