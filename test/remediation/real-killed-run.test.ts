import { afterAll, expect, it } from 'vitest';
import type { ActionJob } from '../../src/actions/action-job.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { keySpace } from '../../src/redis/key-space.js';
import { crashEvent } from '../support/crash-event.js';
import { STATUS_STOPPED, describeEachBed } from '../support/daemon-bed.js';
import { testExecutor } from '../support/executor.js';
import { killedRunThenOperatorStop, restartOnCrash } from '../support/killed-run.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * docs/chaos.md 35 on the real daemons (LXD 5.0.2, Incus 6.0): a replica killed after the daemon
 * took its start of a crashed instance, before it recorded the call's outcome (between the 202 and
 * the reply, or while the operation ran); the operator stops the instance, and that stop's frames
 * died with the replica; the daemon forgets both operations. BullMQ then runs the stalled job
 * again on another replica: it must not start the instance a second time. What the killed run
 * left in Redis is written as it leaves it; the starts and the stop are the daemon's.
 */

await describeEachBed('a stalled job whose killed run started the instance', (bed) => {
  const redis = redisClient();
  const client = new InstanceClient(parseTarget(bed.target));
  afterAll(async () => {
    await client.close();
    redis.disconnect();
  });

  it.each(['reply', 'operation'] as const)(
    "leaves stopped the instance the operator stopped after the killed run's start (it died before the %s was recorded)",
    async (died) => {
      const name = await bed.launch({ config: { 'user.reflex.autorestart': 'true' }, start: false });
      try {
        const keys = keySpace(uniquePrefix('killed-run'));
        const { executor, close } = testExecutor(redis, keys, client, [restartOnCrash]);
        try {
          const incidentAt = Date.now() - 1_000;
          const job: ActionJob = {
            rule: 'restart-on-crash',
            action: 'start',
            params: {},
            target: bed.target,
            project: 'default',
            instance: name,
            correlationId: `killed-${died}`,
            incidentAt,
            event: crashEvent(bed.target, name, { timestamp: new Date(incidentAt).toISOString() }),
            origin: 'rule',
            dryRun: false,
          };
          const ref = { target: bed.target, project: 'default', instance: name };
          await killedRunThenOperatorStop({ redis, keys, client, ref, jobId: 'killed' }, died, 30_000);
          const again = await executor.execute(job, 'killed', 1, 3);
          expect(again).toMatchObject({ result: 'skipped', summary: expect.stringContaining('an earlier run of this job sent start') });
          expect((await bed.status(name)).status_code).toBe(STATUS_STOPPED);
        } finally {
          await close();
        }
      } finally {
        await bed.remove(name);
      }
    },
    90_000,
  );
});
