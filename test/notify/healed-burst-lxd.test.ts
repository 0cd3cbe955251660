import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { describeBed, lxdBed, lxdSocketPath, STATUS_RUNNING } from '../support/daemon-bed.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { sleep, until } from '../support/wait.js';

const groupIntervalMs = 3_000;

interface Body {
  status: string;
  alerts: { instance: string; status: string }[];
}

await describeBed(lxdBed, 'a healed burst of crashes on real LXD, two replicas', () => {
  const instances: string[] = [];
  const replicas: ReflexProcess[] = [];
  let server: RecordingServer | undefined;
  let dir: string | undefined;
  const prefix = uniquePrefix('burst');

  afterAll(async () => {
    for (const r of replicas) await r.stop();
    for (const name of instances) await lxdBed.remove(name).catch(() => undefined);
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    const redis = redisClient();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }, 120_000);

  it('five opted-in containers killed 0.25 s apart and healed: the receiver hears of each in the first message after Reflex decided on its crash, and of each recovery once', async () => {
    server = await startRecordingServer();
    dir = mkdtempSync(join(tmpdir(), 'reflex-burst-'));
    writeFileSync(join(dir, 'hook.secret'), `${testWebhookSecret}\n`, { mode: 0o600 });
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      stringify({
        target: `unix://${lxdSocketPath()}`,
        redisUrl: redisUrl(),
        rulesDir: resolve('rules'),
        prefix,
        resyncIntervalMs: 0,
        httpPort: 0,
        notifications: {
          receivers: [{ kind: 'webhook', name: 'ops-hook', url: server.url, secretFile: join(dir, 'hook.secret'), backoffMs: 100 }],
          route: { receiver: 'ops-hook', groupWaitMs: 0, groupIntervalMs },
        },
      }),
    );
    for (let i = 0; i < 5; i++) instances.push(await lxdBed.launch({ config: { 'user.reflex.autorestart': 'true' } }));
    for (let i = 0; i < 2; i++) replicas.push(startReflexProcess(['run', '--config', file], { REFLEX_LOG_LEVEL: 'info' }));
    await Promise.all(replicas.map((r) => r.waitForLog('reflex running')));
    await until(
      'one replica reading the event stream',
      () => replicas.some((r) => r.logs.some((l) => String(l.msg).includes('event stream connected'))),
      30_000,
    );

    let lastCrash = 0;
    for (const [i, name] of instances.entries()) {
      if (i > 0) await sleep(250); // the point: a burst spread over the group interval, not one instant
      await lxdBed.crash(name);
      lastCrash = Date.now();
    }
    for (const name of instances) await lxdBed.waitForStatus(name, STATUS_RUNNING, 30_000);

    const bodies = () => server!.requests.map((r) => ({ at: r.at, body: r.json as Body }));
    const seen = (status?: string) => (name: string) =>
      bodies().find((b) => b.body.alerts.some((a) => a.instance === name && (!status || a.status === status)));
    await until('every instance in a message', () => instances.every((n) => seen()(n)), 4 * groupIntervalMs);
    // The grouping's promise: an alert raised between two flushes goes out with the next one. So
    // each instance is in the first message sent after Reflex learned of its crash (its rule's
    // decision, audited as the alert is raised; the second of slack covers raising it after the
    // record): no message sent in between leaves it out. When the flush itself runs late on a
    // loaded machine (41 ms past the interval was seen in CI) that is the benches' matter, not the
    // grouping's; how long the crash took to reach Reflex is too.
    const redis = redisClient();
    const decisions = (await new AuditLog(redis, keySpace(prefix).audit).read({ type: 'decision' })).filter((r) => r.rule === 'restart-on-crash');
    redis.disconnect();
    const learned = (n: string) => Date.parse(decisions.find((r) => r.instance === n)!.at);
    for (const n of instances) {
      const skipped = bodies().filter((b) => b.at > learned(n) + 1000 && b.at < seen()(n)!.at);
      expect(
        skipped.map((b) => b.at - learned(n)),
        `${n}: messages sent after its decision that left it out (ms after the decision); it came ${seen()(n)!.at - learned(n)} ms after`,
      ).toEqual([]);
    }
    // And the flushes keep their interval: a message at most one interval (and the second of slack) after the decision, or the next one.
    const delays = instances.map((n) => seen()(n)!.at - learned(n));
    expect(
      Math.max(...delays),
      `delays after each crash's decision: ${delays.join(', ')} ms (after the last crash: ${instances.map((n) => seen()(n)!.at - lastCrash).join(', ')} ms)`,
    ).toBeLessThanOrEqual(2 * groupIntervalMs);
    await until('every recovery in a message', () => instances.every((n) => seen('resolved')(n)), 4 * groupIntervalMs);
    await sleep(2 * groupIntervalMs); // two more flushes, in which no instance may be sent again
    for (const name of instances) {
      const statuses = bodies().flatMap((b) => b.body.alerts.filter((a) => a.instance === name).map((a) => a.status));
      expect(
        statuses.filter((s) => s === 'resolved'),
        `${name}: ${statuses.join(', ')}`,
      ).toEqual(['resolved']);
      expect(statuses.filter((s) => s === 'firing').length).toBeLessThanOrEqual(1);
    }
    // Alerts listed in the order they happened: the crash order.
    const last = bodies().at(-1)!.body;
    const order = last.alerts.map((a) => a.instance).filter((n) => instances.includes(n));
    expect(order).toEqual(instances.filter((n) => order.includes(n)));
  }, 180_000);
});
