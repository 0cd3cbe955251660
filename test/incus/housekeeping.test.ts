import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { keySpace } from '../../src/redis/key-space.js';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { startScheduler } from '../../src/schedules/scheduler.js';
import { startActionRunner } from '../support/action-runner.js';
import { INCUS_SOCKET, deleteIncusInstance, describeIncus, incus, launchIncusInstance, sleep } from '../support/incus-bed.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/** A snapshot schedule on real Incus 6.0, as test/schedules/real-lxd-housekeeping.test.ts on LXD. */
await describeIncus('scheduled housekeeping on real Incus 6.0', () => {
  const tag = randomBytes(4).toString('hex');
  const target = `unix://${INCUS_SOCKET}`;
  let name = '';
  let outsider = '';
  let client: InstanceClient;

  beforeAll(async () => {
    client = new InstanceClient(parseTarget(target));
    name = await launchIncusInstance({ config: { 'user.reflex.hk': tag } });
    outsider = await launchIncusInstance();
    await incus(['snapshot', 'create', name, 'manual-keep']);
  }, 60_000);

  afterAll(async () => {
    for (const n of [name, outsider]) if (n) await deleteIncusInstance(n);
    await client?.close();
  }, 60_000);

  it('snapshots the opted-in instance every 2 s, retention keeps the newest two it owns, and others are untouched', async () => {
    const prefix = uniquePrefix('hk-incus');
    const keys = keySpace(prefix);
    const redis = redisClient();
    const reader = redisClient();
    const runner = startActionRunner(redis, keys, () => client);
    const schedule = defineSchedule({
      name: 'hk-incus',
      every: '2s',
      scope: { filter: `config.user.reflex.hk eq ${tag}` },
      tasks: [{ task: 'snapshot', namePattern: 'hk-%Y%m%d-%H%M%S', expiry: '1d' }, { task: 'retention', keepLast: 2 }],
    });
    const scheduler = await startScheduler({ target, redis, client, audit: new AuditLog(redis, keys.audit), keys, logger: pino({ level: 'silent' }), schedules: [schedule], actions: runner.actions });
    const log = new AuditLog(reader, keys.audit);
    try {
      const end = Date.now() + 40_000;
      while (new Set((await log.read({})).filter((r) => r.type === 'outcome' && r.result === 'done').map((r) => r.correlationId)).size < 4) {
        if (Date.now() > end) throw new Error('schedule did not run four times within 40 s');
        await sleep(200);
      }
    } finally {
      await scheduler.stop();
      await runner.stop();
      redis.disconnect();
    }
    const records = await log.read({});
    reader.disconnect();
    const created = records.filter((r) => r.type === 'call' && r.instance === name && r.method === 'POST').map((r) => String(r.step).split(' ')[2]!);
    expect(created.length).toBeGreaterThanOrEqual(4);
    const snapshots = (await client.listSnapshots(name)).map((s) => s.name).sort();
    expect(snapshots.filter((s) => s.startsWith('hk-'))).toEqual(created.slice(-2).sort());
    expect(snapshots).toContain('manual-keep');
    expect(records.filter((r) => r.type === 'call' && r.instance === name && r.method === 'DELETE')).toHaveLength(created.length - 2);
    expect(await client.listSnapshots(outsider)).toEqual([]);
    const expiry = (await client.listSnapshots(name)).find((s) => s.name.startsWith('hk-'))!.expires_at!;
    expect(Date.parse(expiry) - Date.now()).toBeGreaterThan(23 * 3_600_000);
  }, 90_000);
});
