import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { InstanceClient } from '../../src/client/client.js';
import { eventsEndpoint } from '../../src/client/events.js';
import { parseTarget } from '../../src/client/target.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { decodeFrame } from '../../src/events/frame.js';
import { normalizeFrame } from '../../src/events/normalize.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { keySpace } from '../../src/redis/key-space.js';
import { STATUS_STOPPED, TEST_INSTANCE_PREFIX, describeEachBed } from '../support/daemon-bed.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

/**
 * Issue #43 item 2 on a real daemon, the race widened: Reflex's exec on an unhealthy instance (a
 * probe's heal) is still running as far as Reflex knows (its wait on the exec has not returned:
 * a busy worker, a long command), and an operator stops the instance. The daemon's stop event,
 * with its requestor, is the operator's: an exec makes no stop, however close in time.
 */
await describeEachBed('an operator’s stop during one of Reflex’s execs', (bed) => {
  it('is the operator’s (requested), not Reflex’s own, while Reflex’s exec on the instance is still running', async () => {
    const redis = redisClient();
    const keys = keySpace(uniquePrefix('stop-during-exec'));
    const own = new OwnOperations(redis, keys);
    const target = parseTarget(bed.target);
    const client = new InstanceClient(target);
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    const frames: string[] = [];
    const ws = new WebSocket(eventsEndpoint(target, ['lifecycle'], { allProjects: true }).url);
    ws.on('message', (data: Buffer) => frames.push(data.toString()));
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      await bed.launch({ name });
      const ref = { target: bed.target, project: 'default', instance: name };
      // Reflex's exec, recorded as the acting client records it once the daemon answered with its operation.
      const sentAt = Date.now();
      const session = await client.exec(name, { command: ['sleep', '30'] }, { timeoutMs: 60_000 });
      const createdAt = Date.parse(session.operation.value.created_at);
      await own.record(ref, session.operation.id, { action: 'exec', state: 'running', sentAt, createdAt });
      await bed.cli(['stop', name, '--force']);
      await bed.waitForStatus(name, STATUS_STOPPED);
      const stopped = await until(
        'the stop’s lifecycle event',
        () => {
          for (const raw of frames) {
            const decoded = decodeFrame(raw);
            if (!decoded.ok) continue;
            const e = normalizeFrame(decoded.frame, bed.target);
            if (e?.kind === 'instance.status' && e.instance === name && e.to === STATUS_STOPPED) return e as InstanceStatusEvent;
          }
          return undefined;
        },
        30_000,
      );
      expect(stopped.intent).toBe('requested');
      expect(await own.classify(ref, stopped), JSON.stringify(stopped)).toBe('requested');
      // Reflex's exec itself is still taken for its own.
      expect(await own.ownExec(ref, { action: 'instance-exec', timestamp: new Date(createdAt + 10).toISOString() })).toBe(true);
      session.close();
    } finally {
      ws.close();
      await client.close();
      redis.disconnect();
      await bed.remove(name);
    }
  }, 120_000);
});
