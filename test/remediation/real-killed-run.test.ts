import { afterAll, expect, it } from 'vitest';
import type { ActionJob } from '../../src/actions/action-job.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { keySpace } from '../../src/redis/key-space.js';
import { recordInflight } from '../../src/remediation/act/inflight.js';
import { configFlag } from '../../src/rules/config-flag.js';
import { defineRule } from '../../src/rules/rule.js';
import { crashEvent } from '../support/crash-event.js';
import { STATUS_STOPPED, describeEachBed } from '../support/daemon-bed.js';
import { testExecutor } from '../support/executor.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

/**
 * docs/chaos.md 35 on the real daemons (LXD 5.0.2, Incus 6.0): a replica killed after the daemon
 * took its start of a crashed instance, before it recorded the call's outcome (between the 202 and
 * the reply, or while the operation ran); the operator stops the instance, and that stop's frames
 * died with the replica; the daemon forgets both operations. BullMQ then runs the stalled job
 * again on another replica: it must not start the instance a second time. What the killed run
 * left in Redis is written as it leaves it; the starts and the stop are the daemon's.
 */

const restartOnCrash = defineRule({
  name: 'restart-on-crash',
  on: { kind: 'instance.status', to: [102], intent: ['unrequested'] },
  when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
  whenNot: 'instance has not opted in',
  actions: [{ action: 'start' }],
  crashLoop: { maxRestarts: 5, initialBackoffMs: 60_000 },
});

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
          const own = new OwnOperations(redis, keys);
          const sentAt = Date.now();
          if (died === 'reply') await own.record(ref, 'local:killed:1:start:1', { action: 'start', state: 'sending', sentAt, job: 'killed' });
          const start = await client.changeState(name, { action: 'start' });
          if (died === 'operation') {
            const createdAt = Date.parse(start.value.created_at);
            await recordInflight(redis, keys, 'killed', { operationId: start.id, action: 'start', sentAt, createdAt });
            await own.record(ref, start.id, { action: 'start', state: 'running', sentAt, createdAt, job: 'killed' });
          }
          await start.wait({ timeoutMs: 30_000 });
          await (await client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
          const mine = `/instances/${name}`;
          await until(
            'the daemon forgets the start and the stop',
            async () => !(await client.listOperations()).some((op) => JSON.stringify(op.resources ?? {}).includes(mine)),
            30_000,
          );
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
