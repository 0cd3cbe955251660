import { once } from 'node:events';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { decodeFrame, type LifecycleFrame } from '../../src/events/frame.js';
import { keySpace } from '../../src/redis/key-space.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { startMemberWatch } from '../../src/remediation/member-watch.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { endedOperations, expectMoveOperations, type OperationFrame } from '../conformance/move-operations.js';
import { auditTrail } from '../support/audit-trail.js';
import { describeBed, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import { clusterBed, clusterInstanceStatus, memberLxc, MEMBERS, memberSocket, moveToMember } from '../support/lxd-cluster-bed.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { sleep } from '../support/wait.js';
import { runningTracked } from '../remediation/trail.js';
import { startReflexProcess } from '../support/reflex-process.js';

/** Reflex connects to member 1 only; member 2's instances must reach it through the cluster. */
const target = `unix://${memberSocket('m1')}`;
const silent = pino({ level: 'silent' });

await describeBed(clusterBed, 'a real two-member LXD cluster, seen through member 1', () => {
  let client: InstanceClient;
  const created: string[] = [];
  beforeAll(() => {
    client = new InstanceClient(parseTarget(target));
  });
  afterAll(async () => {
    for (const name of created) await clusterBed.remove(name);
    await client.close();
  });

  /** Runs `body` while an event subscriber on member 1 passes each frame of `type` to `onFrame`. */
  async function listening(type: 'lifecycle' | 'operation', onFrame: (raw: string) => void, body: () => Promise<void>): Promise<void> {
    const subscriber = new EventSubscriber({ endpoint: () => client.eventsEndpoint([type]), onFrame, logger: silent });
    const connected = once(subscriber, 'connected');
    subscriber.start();
    try {
      await connected;
      await body();
    } finally {
      await subscriber.stop();
    }
  }

  it('delivers lifecycle events of instances on both members to one subscriber on member 1, each located on its member', async () => {
    const frames: LifecycleFrame[] = [];
    await listening(
      'lifecycle',
      (raw) => {
        const decoded = decodeFrame(raw);
        if (decoded.ok && decoded.frame.type === 'lifecycle') frames.push(decoded.frame);
      },
      async () => {
        const onM1 = await clusterBed.launch({ member: 'm1' });
        created.push(onM1);
        const onM2 = await clusterBed.launch({ member: 'm2' });
        created.push(onM2);
        const started = (name: string) =>
          frames.find((f) => f.metadata.action === 'instance-started' && f.metadata.source === `/1.0/instances/${name}`);
        await expect.poll(() => started(onM1) && started(onM2), { timeout: 5_000, interval: 50 }).toBeTruthy();
        expect(started(onM1)!.location).toBe('m1');
        expect(started(onM2)!.location).toBe('m2');
      },
    );
  });

  it('restarts an instance crashed on member 2 from a reflex run connected to member 1, where it was', async () => {
    const prefix = uniquePrefix('cluster');
    const reflex = startReflexProcess(
      ['run', '--target', target, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--http-port', '0'],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    try {
      await reflex.waitForLog('reflex running');
      const name = await clusterBed.launch({ member: 'm2', config: { 'user.reflex.autorestart': 'true' } });
      created.push(name);
      await runningTracked(redisUrl(), prefix, name);
      await clusterBed.crash(name);
      await clusterBed.waitForStatus(name, STATUS_STOPPED, 5_000);
      await clusterBed.waitForStatus(name, STATUS_RUNNING, 15_000).catch(async (err: Error) => {
        // Say what Reflex saw and did: the trail and its last log lines.
        const trail = await auditTrail(redisUrl(), prefix, name).catch(() => []);
        const logs = reflex.logs.slice(-10).map((l) => JSON.stringify(l));
        throw new Error([err.message, 'trail:', ...trail.map((r) => `${r.type}: ${r.summary}`), 'reflex logs:', ...logs].join('\n'));
      });
      expect((await clusterInstanceStatus(name)).location).toBe('m2');
      const trail = await auditTrail(redisUrl(), prefix, name);
      const summaries = trail.map((r) => `${r.type}: ${r.summary}`);
      expect(
        summaries.some((s) => s.startsWith('event:') && s.includes('103 → 102 (unrequested, instance-shutdown)')),
        summaries.join('\n'),
      ).toBe(true);
      expect(
        trail.some((r) => r.type === 'call' && /\bstart\b/.test(r.summary)),
        summaries.join('\n'),
      ).toBe(true);
    } finally {
      await reflex.stop();
    }
  }, 45_000);

  it('runs a move as the operations the simulator reproduces: the copy created on the target, the instance deleted, the copy renamed', async () => {
    const frames: OperationFrame[] = [];
    await listening(
      'operation',
      (raw) => void frames.push(JSON.parse(raw) as OperationFrame),
      async () => {
        const name = await clusterBed.launch({ member: 'm1' });
        created.push(name);
        await memberLxc('m1', ['stop', name, '--force']);
        const uuid = (await client.getInstance(name)).value.config['volatile.uuid'];
        frames.length = 0;
        await moveToMember(name, 'm2');
        // The move's own task ends last on member 1, but member 2's ends reach this stream after a relay
        // (a CI run read m1's "Migrating" end before m2's "Renaming"): wait for the four tasks and the websocket.
        const moveEnds = () => endedOperations(frames).filter(([d]) => /^(Migrating|Creating|Deleting|Renaming) instance$/.test(d)).length;
        await expect.poll(moveEnds, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(5);
        expectMoveOperations(frames, { name, copy: `lxd-move-of-${uuid}`, from: 'm1', to: 'm2' });
      },
    );
  });

  it('reads every member Online, and the member watch raises no alert for them', async () => {
    const members = await client.clusterMembers();
    expect(members.map((m) => [m.server_name, m.status]).sort()).toEqual(MEMBERS.map((m) => [m, 'Online']));
    const redis = redisClient();
    const keys = keySpace(uniquePrefix('members'));
    const { alerts: raising, raised: alerts } = recordingAlerts(new AuditLog(redis, keys.audit));
    const stop = startMemberWatch({ targets: [{ id: target, client }], redis, keys, alerts: raising, logger: silent, intervalMs: 100 });
    try {
      await sleep(1_000); // the point: ten rounds of the member watch with every member Online, in which no alert may come
      expect(alerts).toEqual([]);
    } finally {
      await stop();
      redis.disconnect();
    }
  });
});
