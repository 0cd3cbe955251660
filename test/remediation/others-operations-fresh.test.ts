import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { keySpace } from '../../src/redis/key-space.js';
import { OperatorRequests } from '../../src/remediation/operator-requests.js';
import { OthersOperations } from '../../src/remediation/others-operations.js';
import { TEST_INSTANCE_PREFIX, describeEachBed } from '../support/daemon-bed.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * The listing of the server's operations an action reads just before its call, on a real daemon.
 * A CI run met the race: a rule's exec read the listing, an operator's stop killed the exec, and
 * the rule's next action (a restart) read the exec's listing again, 0.24 s old, which predated the
 * stop: the restart was sent (the daemon refused it as busy; a stop done by then would have been
 * undone). An action's listing is read at the moment it asks, or shares one still in flight; one
 * that has answered is never reused.
 */
await describeEachBed('the server’s operations an action reads before its call', (bed) => {
  it('a listing asked for right after an operator’s stop shows the stop, though one was read just before it', async () => {
    const redis = redisClient();
    const keys = keySpace(uniquePrefix('others-fresh'));
    const others = new OthersOperations(new OwnOperations(redis, keys), new OperatorRequests(redis, keys));
    const client = new InstanceClient(parseTarget(bed.target));
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    const key = `${bed.target}\u0000default`;
    try {
      await bed.launch({ name, init: '/bin/sleep 100000' });
      // The first action's listing, answered before the operator acts.
      await others.recent(client, key);
      // The operator's stop: its init ignores the graceful signal, so the operation runs on while the next action asks.
      const stop = await client.changeState(name, { action: 'stop', timeout: 30 });
      const listed = await others.recent(client, key);
      expect(listed.map((op) => op.id)).toContain(stop.value.id);
    } finally {
      await bed.remove(name);
      await client.close();
      redis.disconnect();
    }
  }, 120_000);

  it('actions that ask while a listing is in flight share it', async () => {
    const redis = redisClient();
    const keys = keySpace(uniquePrefix('others-shared'));
    const others = new OthersOperations(new OwnOperations(redis, keys), new OperatorRequests(redis, keys));
    const client = new InstanceClient(parseTarget(bed.target));
    try {
      const key = `${bed.target}\u0000default`;
      const first = others.recent(client, key);
      expect(others.recent(client, key)).toBe(first);
      await first;
      expect(others.recent(client, key)).not.toBe(first);
    } finally {
      await client.close();
      redis.disconnect();
    }
  });
});
