import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { keySpace } from '../../src/redis/key-space.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { startMemberWatch } from '../../src/remediation/member-watch.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { recordingAlerts, type RecordedAlert } from '../alerts/recording-alerts.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { sleep, until } from '../support/wait.js';

describe('a cluster member going offline', () => {
  let sim: RunningSimulator | undefined;
  const stops = cleanupsAfterEach();

  /**
   * Two replicas' watches on one target, sharing Redis, as two `reflex run` would. `rounds(n)` waits
   * until each replica has finished `n` more rounds from now: a round starts with `GET /1.0`, and
   * rounds run one after the other, so the start of round k + 1 is the end of round k.
   */
  async function replicas(
    members: string[] | undefined,
    opts: { secondAnswersLateMs?: number } = {},
  ): Promise<{ alerts: RecordedAlert[]; target: string; rounds(n: number): Promise<void> }> {
    const simulator = await startSimulator({ instances: 3, ...(members ? { cluster: { members } } : {}) });
    sim = simulator;
    stops.push(() => simulator.stop());
    const target = `unix://${simulator.socketPath}`;
    const keys = keySpace(uniquePrefix('members'));
    const alerts: RecordedAlert[] = [];
    const started = [0, 0];
    for (let i = 0; i < 2; i++) {
      const redis = redisClient();
      const { alerts: raising } = recordingAlerts(new AuditLog(redis, keys.audit), alerts);
      const client = new InstanceClient(parseTarget(target));
      const server = client.server.bind(client);
      client.server = (o) => (started[i]!++, server(o));
      const late = i === 1 ? opts.secondAnswersLateMs : undefined;
      if (late) {
        // The members as the daemon had them when asked, handed over `late` ms later (a slow answer).
        const members = client.clusterMembers.bind(client);
        client.clusterMembers = async () => {
          const read = await members();
          await sleep(late);
          return read;
        };
      }
      const stop = startMemberWatch({
        targets: [{ id: target, client }],
        redis,
        keys,
        alerts: raising,
        logger: pino({ level: 'silent' }),
        intervalMs: 100,
      });
      stops.push(async () => (await stop(), await client.close(), redis.disconnect()));
    }
    const rounds = async (n: number) => {
      const from = [...started];
      await until(`${n} more rounds of both replicas`, () => started.every((s, i) => s > from[i]! + n), 10_000);
    };
    return { alerts, target, rounds };
  }

  it('raises one alert of its own across two replicas, and resolves it once when the member is back', async () => {
    const { alerts, target, rounds } = await replicas(['m1', 'm2', 'm3']);
    await rounds(4); // the point: four rounds of both replicas with every member Online, in which no alert may come
    expect(alerts).toEqual([]);

    sim!.controls.memberDown('m2');
    await expect.poll(() => alerts.length, { timeout: 5_000, interval: 50 }).toBe(1);
    expect(alerts[0]).toMatchObject({ kind: 'member.offline', status: 'firing', target, instance: 'member:m2', member: 'm2' });
    await rounds(5); // the point: five more rounds of both replicas, which must not raise it again
    expect(alerts).toHaveLength(1);

    sim!.controls.memberUp('m2');
    await expect.poll(() => alerts.length, { timeout: 5_000, interval: 50 }).toBe(2);
    expect(alerts[1]).toMatchObject({ kind: 'member.offline', status: 'resolved', instance: 'member:m2' });
    await rounds(5); // nor resolve it again
    expect(alerts).toHaveLength(2);
  });

  it('a replica whose reading answers late never undoes a newer one: one alert and one resolve when the member goes and comes back', async () => {
    // The second replica's readings are 400 ms old when it acts on them, four of the first's rounds:
    // after the member is back, it still reports it Offline for a while.
    const { alerts, rounds } = await replicas(['m1', 'm2', 'm3'], { secondAnswersLateMs: 400 });
    await rounds(2);
    sim!.controls.memberDown('m2');
    await expect.poll(() => alerts.length, { timeout: 5_000, interval: 50 }).toBe(1);
    await rounds(3);
    sim!.controls.memberUp('m2');
    await expect.poll(() => alerts.length, { timeout: 5_000, interval: 50 }).toBe(2);
    await rounds(3); // the point: the late replica's readings of Offline arrive in these rounds
    expect(alerts.map((a) => a.status)).toEqual(['firing', 'resolved']);
  });

  it('says nothing of a server that is not clustered', async () => {
    const { alerts, rounds } = await replicas(undefined);
    await rounds(5); // the point: five rounds of both replicas, in which nothing may be said
    expect(alerts).toEqual([]);
  });
});
