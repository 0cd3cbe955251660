import { afterAll, describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { OwnOperations, isProbeEcho } from '../../src/events/own-operations.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * Which stops Reflex takes for its own: the spurious shutdown a start of its that failed leaves
 * (LXD sends one about 0.5 s after the failure), and nothing after a later start of its that ran
 * the instance again.
 */
describe("Reflex's own operations and the stops they explain", () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const keys = keySpace(uniquePrefix('own'));
  const ref = { target: 'unix:///sim', project: 'default', instance: 'c1' };
  const shutdownAt = (ms: number) => ({ intent: 'unrequested' as const, action: 'instance-shutdown', timestamp: new Date(ms).toISOString() });

  it("takes the shutdown soon after a failed start of its own for that start's echo", async () => {
    const own = new OwnOperations(redis, keys);
    const t = Date.now();
    await own.record({ ...ref, instance: 'echo' }, 'op-failed', { action: 'start', state: 'failed', sentAt: t, createdAt: t, endedAt: t + 50 });
    expect(await own.classify({ ...ref, instance: 'echo' }, shutdownAt(t + 600))).toBe('self');
  });

  it('takes a shutdown after a later start of its own that ran the instance for a crash, though the failed start was 1 s before', async () => {
    const own = new OwnOperations(redis, keys);
    const t = Date.now();
    // The start refused while a crash's stop hook ran ("busy"), the retry that started it, then a crash.
    await own.record(ref, 'op-busy', { action: 'start', state: 'failed', sentAt: t, createdAt: t, endedAt: t + 20 });
    await own.record(ref, 'op-retry', { action: 'start', state: 'done', sentAt: t + 300, createdAt: t + 310, endedAt: t + 400 });
    expect(await own.classify(ref, shutdownAt(t + 1_000))).toBe('unrequested');
  });

  it('takes a shutdown of an instance last seen Running for a crash, though a start of its own failed just before (refused: it already ran)', async () => {
    const own = new OwnOperations(redis, keys);
    const tracker = new StateTracker(redis, keys);
    const ran = { ...ref, instance: 'ran' };
    const t = Date.now();
    await tracker.update(ran, 103, t - 5_000, { source: 'event', eventId: 'started-1', intent: 'self' });
    // An operator's heal: Reflex's start refused "The instance is already running", then the guest dies.
    await own.record(ran, 'op-already', { action: 'start', state: 'failed', sentAt: t, createdAt: t, endedAt: t + 20 });
    const crash = { ...shutdownAt(t + 40), id: 'crash-1' };
    expect(await own.classify(ran, crash)).toBe('unrequested');
    // Redelivered after the tracker took it: judged on what it replaced, the same way.
    await tracker.update(ran, 102, t + 40, { source: 'event', eventId: 'crash-1', intent: 'unrequested' });
    expect(await own.classify(ran, crash)).toBe('unrequested');
  });

  it("answers from one record whose an exec is: a probe's command is its echo, an exec action's is its own by its window, an operator's other command neither", async () => {
    const own = new OwnOperations(redis, keys);
    const probed = { ...ref, instance: 'probed' };
    const t = Date.now();
    await own.probeExec(probed, ['pidof', 'nginx']);
    await own.record(probed, 'op-exec', { action: 'exec', state: 'done', sentAt: t, createdAt: t, endedAt: t + 100 });
    const exec = (command: string[], at: number) => ({ action: 'instance-exec', timestamp: new Date(at).toISOString(), context: { command } });
    expect(await isProbeEcho(redis, keys, probed, exec(['pidof', 'nginx'], t + 5_000).context)).toBe(true);
    expect(await isProbeEcho(redis, keys, { ...probed, instance: 'other' }, exec(['pidof', 'nginx'], t).context)).toBe(false);
    expect(await isProbeEcho(redis, keys, probed, exec(['sh', '-c', 'true'], t).context)).toBe(false);
    expect(await own.ownExec(probed, exec(['systemctl', 'restart', 'nginx'], t + 50))).toBe(true);
    expect(await own.ownExec(probed, exec(['sh', '-c', 'true'], t + 5_000))).toBe(false);
  });
  it("reads an operation's record once: the status events after the first know it as Reflex's without a read (a no is read again)", async () => {
    const own = new OwnOperations(redis, keys);
    const started = { ...ref, instance: 'started' };
    const t = Date.now();
    expect(await own.isOwn(started, 'op-start')).toBe(false);
    await own.record(started, 'op-start', { action: 'start', state: 'running', sentAt: t, createdAt: t });
    expect(await own.isOwn(started, 'op-start')).toBe(true);
    // Gone from Redis behind its back: the running and done events of the same operation are still known for ours.
    await redis.del(keys.ownOperations(started));
    expect(await own.isOwn(started, 'op-start')).toBe(true);
    expect(await own.isOwn({ ...started, instance: 'other' }, 'op-start')).toBe(false);
    expect(await new OwnOperations(redis, keys).isOwn(started, 'op-start')).toBe(false);
  });
});
