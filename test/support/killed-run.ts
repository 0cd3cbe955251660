import { isApiStatus } from '../../src/client/api-error.js';
import type { InstanceClient } from '../../src/client/client.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import type { InstanceRef, KeySpace } from '../../src/redis/key-space.js';
import { recordInflight } from '../../src/remediation/act/inflight.js';
import { configFlag } from '../../src/rules/config-flag.js';
import { defineRule } from '../../src/rules/rule.js';
import { until } from './wait.js';

/** The bundled rule's shape: start an opted-in instance that stopped unrequested. */
export const restartOnCrash = defineRule({
  name: 'restart-on-crash',
  on: { kind: 'instance.status', to: [102], intent: ['unrequested'] },
  when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
  whenNot: 'instance has not opted in',
  actions: [{ action: 'start' }],
  crashLoop: { maxRestarts: 5, initialBackoffMs: 60_000 },
});

/**
 * docs/chaos.md 35: a run of job `jobId` whose replica was killed after the daemon took its start
 * of `ref`, before it recorded the call's outcome (`died`: before the reply, or while the operation
 * ran). Leaves in Redis what such a run leaves (its mark of the call as sent, or the in-flight
 * record and the operation's mark); the daemon does the start. Then the operator stops the
 * instance, unseen (its frames died with the replica), and the daemon forgets both operations.
 */
export async function killedRunThenOperatorStop(
  o: { redis: RedisConnection; keys: KeySpace; client: InstanceClient; ref: InstanceRef; jobId: string },
  died: 'reply' | 'operation',
  timeoutMs: number,
): Promise<void> {
  const { redis, keys, client, ref, jobId } = o;
  const own = new OwnOperations(redis, keys);
  const sentAt = Date.now();
  if (died === 'reply') await own.record(ref, `local:${jobId}:1:start:1`, { action: 'start', state: 'sending', sentAt, job: jobId });
  const start = await client.changeState(ref.instance, { action: 'start' });
  if (died === 'operation') {
    const createdAt = Date.parse(start.value.created_at);
    await recordInflight(redis, keys, jobId, { operationId: start.id, action: 'start', sentAt, createdAt });
    await own.record(ref, start.id, { action: 'start', state: 'running', sentAt, createdAt, job: jobId });
  }
  await start.wait({ timeoutMs });
  const stop = await client.changeState(ref.instance, { action: 'stop', force: true });
  await stop.wait({ timeoutMs });
  // Forgotten: a GET of each answers 404. Incus 6.0 lists an operation no more a moment before its
  // GET says so (meanwhile: 500 "Missing event connection with target cluster member").
  const forgotten = (id: string) =>
    client.getOperation(id).then(
      () => false,
      (err: unknown) => (isApiStatus(err, 404) ? true : isApiStatus(err, 500) ? false : Promise.reject(err)),
    );
  await until('the daemon forgets the start and the stop', async () => (await forgotten(start.id)) && forgotten(stop.id), timeoutMs);
}
