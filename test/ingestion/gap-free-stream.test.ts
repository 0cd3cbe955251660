import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { retryPolicy } from '../../src/errors/retry-policy.js';
import { OperatorRequests } from '../../src/remediation/operator-requests.js';
import { runReflex } from '../support/reflex-process.js';
import { redisUrl, reflexArgs } from '../support/redis.js';
import { optIn, startIngestionBed, type IngestionBed } from './support/ingestion-bed.js';
import { settled } from '../support/settled.js';
import { until, untilReached } from '../support/wait.js';
import { simApi } from '../support/sim-api.js';
import { ownRedis } from '../support/own-redis.js';
import { Redis } from 'ioredis';
import { pino } from 'pino';

/**
 * Fault injection on the simulator: whatever happens to the event stream, every real state change
 * of an instance is published exactly once as an instance.status event (synthetic when only a
 * resync could see it). A stop only a resync saw has no known cause: the bundled rule does not
 * guess it into a start (it could undo an operator's stop), Reflex says so in the audit and how to
 * heal it; when the stream's own event comes after all and explains it, Reflex acts on that.
 */
describe('a gap-free event stream', () => {
  let bed: IngestionBed | undefined;
  afterEach(async () => {
    await bed?.stop();
    bed = undefined;
  });

  const connected = (b: IngestionBed) => until('event stream connected', () => b.reflex.subscriber?.connected === true, 10_000);
  const stopped = (b: IngestionBed, name: string) => until(`${name} stopped`, () => b.sim.controls.statusCode(name) === 102, 5_000);
  const act = async (b: IngestionBed, name: string, action: 'start' | 'stop' | 'freeze' | 'unfreeze', extra: { force?: boolean } = {}) => {
    await (await b.client.changeState(name, { action, ...extra })).wait();
  };
  /** Crashes an instance and waits until its shutdown event exists (published, whether it reached anyone). */
  const crashed = async (b: IngestionBed, name: string) => {
    const published = b.sim.controls.eventsPublished;
    b.sim.controls.crash(name);
    await stopped(b, name);
    await until(`${name}'s shutdown event published`, () => b.sim.controls.eventsPublished > published, 5_000);
  };
  const running = (b: IngestionBed, name: string) => until(`${name} running`, () => b.sim.controls.statusCode(name) === 103, 10_000);
  /** A stop found by a resync alone: recorded with intent unknown, an alert saying how to heal it, and no start. */
  const expectLeftAloneAsUnknown = async (b: IngestionBed, name: string) => {
    expect(await b.waitTrail(name, 1)).toEqual(['103→102 unknown synthetic']);
    const audit = new AuditLog(b.redis, b.keys.audit);
    await until(`${name} alert`, async () => (await audit.read({ instance: name })).some((r) => r.type === 'alert'), 5_000);
    const alert = (await audit.read({ instance: name })).find((r) => r.type === 'alert')!;
    expect(alert.summary).toContain(`${name} found Stopped after a gap, cause unknown: Reflex does not start it; to start it: reflex heal ${name}`);
    await settled(redisUrl(), b.prefix); // a start Reflex should not make would be in the actions queue
    expect(b.sim.controls.statusCode(name)).toBe(102);
    expect(b.sim.controls.calls(name, 'start')).toBe(0);
  };

  it('survives reordered, duplicated, delayed and malformed frames, with one event per change', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'r1' });
    b.sim.controls.addInstance({ name: 'c1', config: optIn });
    await connected(b);
    await b.reflex.resync(); // baseline: both Running
    let held: string | undefined;
    b.proxy!.setHook((raw, send) => {
      // Every frame twice; lifecycle frames of r1 swapped pairwise (the later one first).
      if (raw.includes('"type":"lifecycle"') && raw.includes('/instances/r1')) {
        if (held === undefined) return void (held = raw);
        send(raw);
        send(raw);
        send(held);
        send(held);
        held = undefined;
        return;
      }
      send(raw);
      send(raw);
    });
    for (const junk of ['not json at all', '{"type":"lifecycle","timestamp":"yesterday","metadata":{}}', '{"type":"nonsense"}', '[]'])
      b.proxy!.inject(`${junk}\n`);

    await act(b, 'r1', 'stop', { force: true });
    await act(b, 'r1', 'start');
    await act(b, 'r1', 'freeze');
    await act(b, 'r1', 'unfreeze');

    // Delayed: c1's crash reaches Reflex only after a resync already reported it (cause unknown, so
    // nothing acts); the stream's own event then explains it, and Reflex restarts it.
    b.sim.controls.pauseEvents();
    await crashed(b, 'c1'); // held by the server
    await b.reflex.resync();
    await settled(redisUrl(), b.prefix); // the resync's event decided on: a start would be in the actions queue
    expect(b.sim.controls.calls('c1', 'start')).toBe(0);
    b.sim.controls.resumeEvents();
    await running(b, 'c1');

    expect(await b.waitTrail('r1', 4)).toEqual(['103→102 requested', '102→103 requested', '103→110 requested', '110→103 requested']);
    expect(await b.waitTrail('c1', 3)).toEqual(['103→102 unknown synthetic', '103→102 unrequested', '102→103 self']);
    expect(b.sim.controls.calls('c1', 'start')).toBe(1);
    await until('four rejected frames', async () => (await b.redis.xlen(b.keys.rejected)) === 4, 5_000);
    const reasons = (await b.redis.xrange(b.keys.rejected, '-', '+')).map(([, f]) => f[f.indexOf('reason') + 1]);
    expect(reasons.join('\n')).toMatch(/not JSON/);
    expect(reasons.join('\n')).toMatch(/timestamp/);
    expect(b.reflex.subscriber?.connected).toBe(true);
  });

  it('does not guess a start for an opted-in instance that stopped while the event socket was cut: it alerts', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'c2', config: optIn });
    b.sim.controls.addInstance({ name: 'quiet' });
    await connected(b);
    await b.reflex.resync();
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await crashed(b, 'c2'); // its shutdown event goes out to nobody
    b.proxy!.refuse(false);
    await expectLeftAloneAsUnknown(b, 'c2');
    expect(await b.trail('quiet')).toEqual([]);
    // The operator decides: `reflex heal` starts it through Reflex, audited.
    const healed = await runReflex(['heal', 'c2', ...reflexArgs(b.prefix, `unix://${b.proxy!.socketPath}`), '--wait', '20s']);
    expect(healed, healed.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining('default/c2: done: started (was Stopped)') });
    expect(b.sim.controls.statusCode('c2')).toBe(103);
    const trail = await new AuditLog(b.redis, b.keys.audit).read({ instance: 'c2' });
    expect(trail.some((r) => r.rule === 'heal' && r.type === 'decision' && /asked Reflex to start default\/c2 \(reflex heal\)/.test(r.summary))).toBe(
      true,
    );
  });

  it('alerts a stop of unknown cause for an instance started and stopped again while the socket was cut (both events lost): down as last known, but started since', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'blip', config: optIn });
    await connected(b);
    await b.reflex.resync();
    await act(b, 'blip', 'stop'); // the operator's stop, seen: Stopped as last known, from the stream
    await until('the stop audited', async () => (await b.trail('blip')).length === 1, 5_000);
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await act(b, 'blip', 'start'); // unseen: someone starts it, and it crashes
    await running(b, 'blip');
    await crashed(b, 'blip');
    b.proxy!.refuse(false);
    const audit = new AuditLog(b.redis, b.keys.audit);
    await until(
      'the stop the resync found',
      async () => (await audit.read({ instance: 'blip' })).some((r) => /103 → 102 \(unknown, seen by resync\)/.test(r.summary)),
      10_000,
    );
    await until(
      'its alert',
      async () => (await audit.read({ instance: 'blip' })).some((r) => r.type === 'alert' && /found Stopped after a gap/.test(r.summary)),
      5_000,
    );
    await settled(redisUrl(), b.prefix);
    expect(b.sim.controls.calls('blip', 'start'), 'no start by Reflex: the cause is unknown').toBe(1);
    // Said once: the resync after it knows the stop now.
    await b.reflex.resync();
    await settled(redisUrl(), b.prefix);
    expect((await audit.read({ instance: 'blip' })).filter((r) => /seen by resync/.test(r.summary))).toHaveLength(1);
  });

  it('alerts a stop of unknown cause for an instance known down from a resync, then started and crashed in a later gap (both events lost): the daemon says it started since that read', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'read-down', config: optIn });
    await connected(b);
    await b.reflex.resync();
    // First gap: the operator's stop, seen only by the resync (Stopped as last known, from a read).
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await act(b, 'read-down', 'stop', { force: true });
    b.proxy!.refuse(false);
    expect(await b.waitTrail('read-down', 1)).toEqual(['103→102 requested synthetic']);
    await connected(b);
    // Second gap: someone starts it and it crashes; neither event reaches Reflex.
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await act(b, 'read-down', 'start');
    await running(b, 'read-down');
    await crashed(b, 'read-down');
    b.proxy!.refuse(false);
    const audit = new AuditLog(b.redis, b.keys.audit);
    await until(
      'the stop the resync found',
      async () => (await audit.read({ instance: 'read-down' })).some((r) => /103 → 102 \(unknown, seen by resync\)/.test(r.summary)),
      10_000,
    );
    await until(
      'its alert',
      async () => (await audit.read({ instance: 'read-down' })).some((r) => r.type === 'alert' && /found Stopped after a gap/.test(r.summary)),
      5_000,
    );
    await settled(redisUrl(), b.prefix);
    expect(b.sim.controls.calls('read-down', 'start'), 'no start by Reflex: the cause is unknown').toBe(1);
  });

  it('alerts a stop of unknown cause for an instance created, started and crashed while the socket was cut: never seen, but it ran while Reflex watched', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'old-and-down', status: 'Stopped' });
    await connected(b);
    await b.reflex.resync(); // baseline: what was down before Reflex watched stays a baseline
    b.proxy!.refuse(true);
    b.proxy!.cut();
    b.sim.controls.addInstance({ name: 'unseen', status: 'Stopped', config: optIn });
    await act(b, 'unseen', 'start');
    await running(b, 'unseen');
    await crashed(b, 'unseen');
    b.proxy!.refuse(false);
    expect(await b.waitTrail('unseen', 1)).toEqual(['103→102 unknown synthetic']);
    const audit = new AuditLog(b.redis, b.keys.audit);
    await until(
      'its alert',
      async () => (await audit.read({ instance: 'unseen' })).some((r) => r.type === 'alert' && /found Stopped after a gap/.test(r.summary)),
      5_000,
    );
    await settled(redisUrl(), b.prefix);
    expect(b.sim.controls.calls('unseen', 'start'), 'no start by Reflex: the cause is unknown').toBe(1);
    expect(await b.trail('old-and-down')).toEqual([]);
  });

  it('leaves an instance stopped through the API during a gap alone when its stop operation is still listed', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'u1', config: optIn });
    await connected(b);
    await b.reflex.resync();
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await act(b, 'u1', 'stop', { force: true });
    b.proxy!.refuse(false);
    expect(await b.waitTrail('u1', 1)).toEqual(['103→102 requested synthetic']); // and the queues at rest: no start in them
    expect(b.sim.controls.statusCode('u1')).toBe(102);
    expect(b.sim.controls.calls('u1', 'start')).toBe(0);
  });

  it("records a state change requested during a gap as the operator's request, from the daemon's operation list, and no rule acts on that record", async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    b.sim.controls.addInstance({ name: 'asked', config: optIn });
    await connected(b);
    await b.reflex.resync();
    b.proxy!.refuse(true);
    b.proxy!.cut();
    // Its frames go out to nobody (as with a replica that read them and died): only its operation is left, for 5 s.
    await act(b, 'asked', 'stop');
    const [stop] = await b.client.listOperations();
    b.proxy!.refuse(false);
    const requests = new OperatorRequests(b.redis, b.keys);
    const ref = { target: b.target, project: 'default', instance: 'asked' };
    await until('the stop recorded as requested', async () => (await requests.list(ref)).some((r) => r.operationId === stop!.id), 10_000);
    expect(await requests.list(ref)).toEqual([expect.objectContaining({ action: 'stop', operationId: stop!.id, status: 200 })]);
    await settled(redisUrl(), b.prefix);
    const audit = await new AuditLog(b.redis, b.keys.audit).read({ instance: 'asked' });
    // One decision, on the stop the resync found (an operator's: no start); none on the listed operation.
    expect(audit.filter((r) => r.type === 'decision').map((r) => r.summary)).toEqual([expect.stringMatching(/^skipped: intent is requested/)]);
    expect(b.sim.controls.calls('asked', 'start')).toBe(0);
  });

  it("carries an operator's stop to the instance's new name when the rename was lost in a gap (known by its volatile.uuid): a forged shutdown of the new name starts nothing", async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    await connected(b);
    await b.reflex.resync();
    // Created after the last resync: only its creation's event tells Reflex its identity.
    await (await b.client.createInstance({ name: 'before', source: { type: 'none' }, config: optIn })).wait();
    await act(b, 'before', 'start');
    await until('its start audited', async () => (await b.trail('before')).length === 1);
    await act(b, 'before', 'stop');
    expect(await b.waitTrail('before', 2)).toEqual(['?→103 requested', '103→102 requested']);
    b.proxy!.refuse(true);
    b.proxy!.cut();
    expect(await simApi(b.sim, 'POST', '/1.0/instances/before', { name: 'after' })).toBe(202);
    await until('the rename done', () => b.sim.controls.statusCode('after') === 102, 5_000);
    b.proxy!.refuse(false);
    const audit = new AuditLog(b.redis, b.keys.audit);
    const renamed = await until('the rename found by the resync', async () =>
      (await audit.read({ instance: 'after' })).find((r) => r.type === 'event' && /instance-renamed/.test(r.summary)),
    );
    expect(renamed.summary).toBe('instance-renamed /1.0/instances/after (from before) (seen by resync)');
    // A shutdown of the new name with no requestor (a crash's shape): the operator's stop is its last word.
    b.sim.controls.injectFrame({
      type: 'lifecycle',
      project: 'default',
      metadata: { action: 'instance-shutdown', source: '/1.0/instances/after', name: 'after', project: 'default', context: {} },
    });
    await until('the forged shutdown audited', async () =>
      (await audit.read({ instance: 'after' })).some((r) => r.type === 'event' && /shutdown|102/.test(r.summary) && r !== renamed),
    );
    await settled(redisUrl(), b.prefix);
    expect(b.sim.controls.calls('after', 'start'), 'the operator stopped it: no start').toBe(0);
    expect(b.sim.controls.statusCode('after')).toBe(102);
  });

  it('alerts a crash of an instance that was stopped, renamed and started again in the gap that hid it: the stop the rename needed is not taken for the stop found after it', async () => {
    bed = await startIngestionBed({ proxy: true });
    const b = bed;
    await connected(b);
    await b.reflex.resync();
    await (await b.client.createInstance({ name: 'moved', source: { type: 'none' }, config: optIn })).wait();
    await act(b, 'moved', 'start');
    await until('its start audited', async () => (await b.trail('moved')).length === 1);
    // In one gap: the operator stops it, renames it and starts it again; then it crashes.
    b.proxy!.refuse(true);
    b.proxy!.cut();
    await act(b, 'moved', 'stop');
    expect(await simApi(b.sim, 'POST', '/1.0/instances/moved', { name: 'moved-on' })).toBe(202);
    await until('the rename done', () => b.sim.controls.statusCode('moved-on') === 102, 5_000);
    await act(b, 'moved-on', 'start');
    await running(b, 'moved-on');
    await crashed(b, 'moved-on');
    b.proxy!.refuse(false);
    const audit = new AuditLog(b.redis, b.keys.audit);
    await until(
      'the crash found by the resync, alerted',
      async () => (await audit.read({ instance: 'moved-on' })).some((r) => r.type === 'alert' && /found Stopped after a gap/.test(r.summary)),
      10_000,
    );
    await settled(redisUrl(), b.prefix);
    expect(b.sim.controls.calls('moved-on', 'start'), 'no start by Reflex: the cause is unknown').toBe(1);
  });

  it('keeps the stream open while Redis refuses the resync after a cut, and tries the resync again: the stop and start made meanwhile are both published', async () => {
    const redis = await ownRedis();
    const admin = new Redis(redis.url);
    try {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(String((JSON.parse(line) as { msg?: unknown }).msg)) });
      bed = await startIngestionBed({ proxy: true, url: redis.url, logger });
      const b = bed;
      b.sim.controls.addInstance({ name: 'held' });
      await connected(b);
      await b.reflex.resync();
      let connects = 0;
      b.reflex.subscriber!.on('connected', () => connects++);
      await admin.config('SET', 'maxmemory', '1');
      b.proxy!.cut();
      const failed = () => lines.filter((l) => /^resync after .* failed/.test(l)).length;
      await until('the resync after the cut refused by Redis', () => failed() > 0, 10_000);
      await act(b, 'held', 'stop');
      await act(b, 'held', 'start');
      const after = failed();
      await until('the resync refused again after the stop and start', () => failed() > after, 10_000);
      await admin.config('SET', 'maxmemory', '0');
      expect(await b.waitTrail('held', 2, 20_000)).toEqual(['103→102 requested', '102→103 requested']);
      expect(connects, 'one reconnect: the stream was not dropped to retry the resync').toBe(1);
    } finally {
      admin.disconnect();
      await bed?.stop();
      bed = undefined;
      await redis.stop();
      redis.remove();
    }
  });

  it('catches up after the server restarts with a stop during the downtime, and alerts instead of guessing', async () => {
    bed = await startIngestionBed();
    const b = bed;
    b.sim.controls.addInstance({ name: 'c3', config: optIn });
    await connected(b);
    await b.reflex.resync();
    const restarting = b.sim.controls.restart(1_000);
    await until('the server down', () => b.sim.controls.eventListeners === 0, 5_000);
    b.sim.controls.crash('c3');
    await restarting;
    await expectLeftAloneAsUnknown(b, 'c3');
  });

  it('reconnects and resyncs after the server drops it as a slow consumer, through a storm', async () => {
    // The simulator shares this process: a storm blocks the event loop, so the lease gets its default TTL.
    bed = await startIngestionBed({ proxy: true, sim: { events: { writeDeadlineMs: 500 } }, config: { leaseTtlMs: 3_000 } });
    const b = bed;
    b.sim.controls.addInstance({ name: 'c4', config: optIn });
    await connected(b);
    await b.reflex.resync();
    const disconnected = new Promise((r) => b.reflex.subscriber!.once('disconnected', r));
    b.proxy!.stall();
    b.sim.controls.crash('c4');
    b.sim.controls.storm(3_000, { name: 'c4' });
    await until('the server gave up on the stalled listener', () => b.sim.controls.eventListeners === 0, 10_000);
    b.proxy!.unstall();
    await disconnected;
    await expectLeftAloneAsUnknown(b, 'c4');
    expect(b.reflex.subscriber?.connected, 'reconnected after the drop').toBe(true);
  }, 60_000);

  it('takes a storm of 3 000 events without losing the connection or a crash that follows it', async () => {
    bed = await startIngestionBed({ config: { leaseTtlMs: 3_000 } });
    const b = bed;
    b.sim.controls.addInstance({ name: 'c5', config: optIn });
    await connected(b);
    await b.reflex.resync();
    const before = await b.redis.xlen(b.keys.archive);
    b.sim.controls.storm(3_000, { name: 'c5' });
    b.sim.controls.crash('c5');
    // However long a loaded host takes, as long as the archive grows: a lost event stops it short.
    // On a starved host an event job can miss its lock renewal and come back after its back-off, so
    // "no progress" means none for longer than the longest back-off and a lock period.
    const stallMs = retryPolicy.eventBackoffMs(retryPolicy.eventAttempts) + 2 * retryPolicy.jobLockMs;
    await untilReached('storm archived', async () => (await b.redis.xlen(b.keys.archive)) - before, 3_000, stallMs);
    await running(b, 'c5');
    expect(await b.waitTrail('c5', 2)).toEqual(['103→102 unrequested', '102→103 self']);
    expect(b.reflex.subscriber?.connected).toBe(true);
  }, 600_000);
});
