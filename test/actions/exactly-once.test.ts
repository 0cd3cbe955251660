import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { EventIngestor } from '../../src/events/event-ingestor.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { waitForAudit } from '../support/audit-trail.js';
import { settled } from '../support/settled.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { until } from '../support/wait.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';

const optIn = { 'user.reflex.autorestart': 'true' };
const logger = pino({ level: 'silent' });

describe('actions happen exactly once', () => {
  const cleanups = cleanupsAfterEach();

  function reflex(sim: RunningSimulator, prefix: string, role = 'all'): ReflexProcess {
    const p = startReflexProcess(
      ['run', '--role', role, ...reflexArgs(prefix, `unix://${sim.socketPath}`), '--rules', 'rules', '--resync-interval', '0', '--http-port', '0'],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    cleanups.push(() => p.stop());
    return p;
  }

  it('restarts each crashed instance once with two replicas running and every event delivered twice', async () => {
    const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
    cleanups.push(() => sim.stop());
    const names = ['c1', 'c2', 'c3', 'c4', 'c5'];
    for (const name of names) sim.controls.addInstance({ name, config: optIn });
    const prefix = uniquePrefix('twice');
    const replicas = [reflex(sim, prefix), reflex(sim, prefix)];
    await Promise.all(replicas.map((r) => r.waitForLog('reflex running')));
    await until(
      'one replica reading the stream',
      () => replicas.some((r) => r.logs.some((l) => String(l.msg).includes('event stream connected'))),
      30_000,
    );

    // A second reader of the same stream writing to the same queue: every frame arrives twice.
    const keys = keySpace(prefix);
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const queue = new Queue(keys.eventsQueue, { connection, prefix: keys.bullPrefix });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    const ingestor = new EventIngestor({ queue, target: `unix://${sim.socketPath}`, logger });
    const duplicate = new EventSubscriber({
      endpoint: () => client.eventsEndpoint(['operation', 'lifecycle'], { allProjects: true }),
      onFrame: (raw, at) => ingestor.pushFrame(raw, at),
      logger,
    });
    duplicate.start();
    await until('the duplicating reader', () => duplicate.connected, 5_000);
    cleanups.push(async () => {
      await duplicate.stop();
      await ingestor.drain();
      await queue.close();
      await client.close();
      connection.disconnect();
    });

    for (const name of names) sim.controls.crash(name);
    await until('every instance Running again', () => names.every((n) => sim.controls.statusCode(n) === 103), 30_000);
    await settled(redisUrl(), prefix); // a second, wrong restart would be in a queue
    expect(Object.fromEntries(names.map((n) => [n, sim.controls.calls(n, 'start')]))).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
  }, 90_000);

  it('resumes waiting on its start after the worker is killed mid-operation, without starting twice', async () => {
    const sim = await startSimulator({ instances: 0, timings: { startMs: 10_000, stopHookMs: 100 } });
    cleanups.push(() => sim.stop());
    sim.controls.addInstance({ name: 'slow', config: optIn });
    const prefix = uniquePrefix('resume');
    const subscriber = reflex(sim, prefix, 'subscriber');
    await subscriber.waitForLog('event stream connected');
    const worker = reflex(sim, prefix, 'worker');
    await worker.waitForLog('reflex running');

    sim.controls.crash('slow');
    await waitForAudit(redisUrl(), prefix, 'slow', (rs) => rs.some((r) => r.type === 'call'), 30_000);
    await worker.kill(); // SIGKILL while the start operation is still running
    expect(sim.controls.statusCode('slow')).not.toBe(103);

    const again = reflex(sim, prefix, 'worker');
    await again.waitForLog('reflex running');
    const trail = await waitForAudit(redisUrl(), prefix, 'slow', (rs) => rs.some((r) => r.type === 'outcome'), 60_000);
    expect(sim.controls.statusCode('slow')).toBe(103);
    expect(sim.controls.calls('slow', 'start')).toBe(1);
    const outcome = trail.find((r) => r.type === 'outcome')!;
    expect(outcome.summary).toMatch(/resumed after a restart of the worker: operation [0-9a-f-]+ ended Success/);
  }, 120_000);
});
