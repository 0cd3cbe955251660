import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, describeEachBed, startReflexOn, type DaemonBed } from '../support/daemon-bed.js';
import { onSocket, operationCreatedAt, operationEnd, operatorStop } from '../support/daemon-socket.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { noActionPending } from '../support/settled.js';
import { appendedAt, crashEvents, runningTracked, show, startCallsSince, type StoredAuditRecord } from './trail.js';

/**
 * Seed 179019817 on the real daemons (LXD 5.0.2, Incus 6.0): the operator stops a container right
 * after it crashed, while the daemon still runs the crash's stop hook. The daemon takes the stop
 * (202) and its operation fails ("The instance is already stopped"; on Incus, sent late enough, it
 * waits for the hook and succeeds); the shutdown it announces after that names no requestor, as
 * any crash's. No lifecycle event names the stop: only its operation on the stream does. Reflex
 * must leave the container stopped, audited as superseded; its twin, crashed with no stop after
 * it, is healed (the same rules would have started the first one).
 */

/**
 * Waits until the daemon reads the instance Stopped, asking on its socket every few ms as an
 * operator's script would (not through the CLI, whose start-up on a loaded machine would send the
 * stop after the stop hook, out of the race this test is for).
 */
async function readsStopped(bed: DaemonBed, name: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const code = (await onSocket<{ status_code?: number }>(bed, 'GET', `/1.0/instances/${name}/state`)).metadata?.status_code;
    if (code === STATUS_STOPPED) return;
    if (Date.now() > deadline) throw new Error(`${name} not read Stopped within ${timeoutMs} ms (last ${code})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// The re-check names the stop when its event was read; the look at the daemon's operations names it otherwise (a loaded machine).
const superseded = (trail: StoredAuditRecord[]) =>
  trail.find(
    (r) => r.type === 'outcome' && /superseded: (a stop was requested|"[^"]*" \(operation [^,]+, not Reflex's\) was requested)/.test(r.summary),
  );

await describeEachBed("an operator's stop during a crash's stop hook is never undone", (bed: DaemonBed) => {
  const prefix = uniquePrefix('hook-stop');
  let reflex: ReflexProcess;
  const created: string[] = [];

  beforeAll(async () => {
    reflex = startReflexOn(bed, redisUrl(), prefix);
    await reflex.waitUntilWatching();
  });
  afterAll(async () => {
    await reflex?.stop();
    for (const name of created) await bed.remove(name);
  });

  it('leaves stopped a container the operator stopped as soon as it read Stopped, before the crash was announced, and heals its twin', async () => {
    const name = await bed.launch({ config: { 'user.reflex.autorestart': 'true' } });
    const twin = await bed.launch({ config: { 'user.reflex.autorestart': 'true' } });
    created.push(name, twin);
    for (const n of [name, twin]) await runningTracked(redisUrl(), prefix, n);

    const monitor = bed.monitor();
    await monitor.listening();
    // The operator sees it down (the daemon reads Stopped some 60 ms after the kill) and stops it.
    const crashedAt = Date.now();
    await bed.crash(name);
    await readsStopped(bed, name);
    const stopSentIn = Date.now() - crashedAt;
    const stop = await operatorStop(bed, name);
    expect(stop.status, 'the daemon takes the stop, and answers it in its operation').toBe(202);
    const shutdown = await monitor.heard(name, 'instance-shutdown', 10_000).finally(() => monitor.stop());
    // Whether the stop landed inside the stop hook (the race this test is for) or, on a loaded
    // machine, just after the announcement: the operator's stop is honoured either way; only the
    // first is superseded by name of the stop's operation.
    const before = shutdown.at - stop.createdAt;
    const duringHook = before > 0;

    await waitForAudit(redisUrl(), prefix, name, (rs) => superseded(rs) !== undefined || startCallsSince(rs, crashedAt).length > 0, 20_000);
    const skippedIn = Date.now() - crashedAt;
    // Every job the crash queued has ended: the trail read now holds every start Reflex made, not
    // only those of the first job to end.
    await noActionPending(redisUrl(), prefix);
    const trail = await auditTrail(redisUrl(), prefix, name);
    // On a loaded machine Reflex's start may reach the daemon before the operator's stop does: then
    // the stop comes after it and stands, or meets it in flight and Reflex gives its start back (the
    // instance ends Stopped either way); a start after the stop never.
    const starts = startCallsSince(trail, crashedAt);
    const startedAt = await Promise.all(starts.map((r) => operationCreatedAt(bed, String(r.operationId))));
    // A stop sent after the announcement (a loaded machine) may meet Reflex's start within the
    // moment of its re-check: a race no re-check closes (the daemon has no conditional state
    // change), 300 ms as the promise checker counts it; a stop during the hook must win outright.
    const race = duringHook ? 0 : 300;
    const afterStop = starts.filter((_, i) => (startedAt[i] ?? Date.parse(starts[i]!.at)) >= stop.createdAt + race);
    expect(afterStop, `no start after the operator's stop (created ${new Date(stop.createdAt).toISOString()})\n${show(trail)}`).toEqual([]);
    expect(crashEvents(trail).length, `the shutdown after it is the crash's, without requestor\n${show(trail)}`).toBe(1);
    if (duringHook && !starts.length) expect(superseded(trail)?.summary, show(trail)).toContain(stop.id);
    // Whatever the order: a start of Reflex's that the stop met in flight (the daemon refuses the
    // stop then) is given back, so the container ends Stopped.
    expect(
      (await bed.status(name)).status_code,
      `still stopped: the operator's stop ${stop.id} created ${new Date(stop.createdAt).toISOString()}, ended ${JSON.stringify(await operationEnd(bed, stop.id)) ?? 'gone'}; the shutdown announced ${new Date(shutdown.at).toISOString()}; Reflex's starts created ${startedAt.map((at) => (at === undefined ? 'gone' : new Date(at).toISOString())).join(', ') || 'none'}\n${show(trail)}`,
    ).toBe(STATUS_STOPPED);

    const twinAt = Date.now();
    await bed.crash(twin);
    const twinTrail = await waitForAudit(redisUrl(), prefix, twin, (rs) => rs.some((r) => r.type === 'outcome' && appendedAt(r) >= twinAt), 20_000);
    await bed.waitForStatus(twin, STATUS_RUNNING, 20_000);
    const healedIn = Date.now() - twinAt;
    expect(startCallsSince(twinTrail, twinAt).length, show(twinTrail)).toBe(1);
    console.info(
      `${bed.name}: ${starts.length ? "Reflex's start reached the daemon before the operator's stop, which stands; " : ''}the operator's stop sent ${stopSentIn} ms after the kill (HTTP ${stop.status}), ${before} ms before the crash was announced (${duringHook ? 'during the stop hook' : 'after it'}); the remediation skipped as superseded ${skippedIn} ms after the kill; the twin healed in ${healedIn} ms`,
    );
  }, 90_000);
});
