import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { InstanceClient } from '../../src/client/client.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { StartFailures } from '../../src/events/intent.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { StateTracker, type TrackedStatus } from '../../src/events/state-tracker.js';
import { StatusSettler } from '../../src/events/status-settler.js';
import { keySpace, type InstanceRef } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/** The real tracker, counting its reads of an entry. */
class CountingTracker extends StateTracker {
  reads = 0;
  override async get(ref: InstanceRef): Promise<TrackedStatus | undefined> {
    this.reads++;
    return super.get(ref);
  }
}

/**
 * A crash's stop is settled on what is known of the instance: the event processor reads the
 * tracker's entry first (is the name tracked at all, or renamed in a gap?), and the settler's
 * failed-start check takes that read instead of reading the same entry again.
 */
describe("a crash's settling reads the instance's tracker entry once", () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const keys = keySpace(uniquePrefix('settle-reads'));
  const ref = { target: 'unix:///sim', project: 'default', instance: 'web-1' };
  const crash = (id: string, at: number): InstanceStatusEvent => ({
    kind: 'instance.status',
    id,
    ...ref,
    location: 'none',
    timestamp: new Date(at).toISOString(),
    synthetic: false,
    to: 102,
    intent: 'unrequested',
    action: 'instance-shutdown',
  });

  it('takes the entry its caller read for the failed-start check, and reads it itself without one', async () => {
    const tracker = new CountingTracker(redis, keys);
    const settler = new StatusSettler({
      tracker,
      audit: new AuditLog(redis, keys.audit),
      // A stop of an instance last seen Running on a standalone server asks the daemon nothing.
      client: () => ({}) as InstanceClient,
      ownOperations: new OwnOperations(redis, keys),
      startFailures: new StartFailures(redis, keys),
      readInstance: async () => undefined,
    });
    const t = Date.now();
    await tracker.update(ref, 103, t - 5_000, { source: 'event', eventId: 'started-1', intent: 'self' });
    const known = await tracker.get(ref);
    tracker.reads = 0;
    const first = crash('crash-1', t);
    expect(await settler.settle(first, { known })).toBe('processed');
    expect(first.intent).toBe('unrequested');
    expect(first.from).toBe(103);
    expect(tracker.reads).toBe(0);

    await tracker.update(ref, 103, t + 1_000, { source: 'event', eventId: 'started-2', intent: 'self' });
    tracker.reads = 0;
    const second = crash('crash-2', t + 2_000);
    expect(await settler.settle(second)).toBe('processed');
    expect(second.intent).toBe('unrequested');
    expect(tracker.reads).toBe(1);
  });
});
