import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../src/audit/audit-log.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { freePort } from '../support/free-port.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { optIn, startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';

/**
 * A deployment whose Redis fills up (`config set maxmemory 1`: every write refused, OOM) says so:
 * /readyz turns 503 within 15 s naming Redis and why, the critical alert reaches the webhook
 * receiver by the fallback path (the durable one writes to Redis), and once the limit is raised
 * Reflex is ready again, the alert resolved, and nothing is lost: a crash during the outage is
 * healed after it. The simulator, a private Redis of the test's own, a receiver on 127.0.0.1.
 */
type Report = { status: string; checks: Record<string, { ok: boolean; detail: string }> };
interface Body {
  status: string;
  alerts: { kind: string; status: string; severity: string; summary: string }[];
}

describe('a Redis that fills up under a running deployment', () => {
  let redis: OwnRedis | undefined;
  let stack: Stack | undefined;

  async function stopStack(): Promise<void> {
    // The limit off first: a full Redis would refuse the stop's own writes.
    await stack?.redis.config('SET', 'maxmemory', '0').catch(() => undefined);
    await stack?.stop();
    stack = undefined;
  }

  afterEach(async () => {
    await stopStack();
    await redis?.stop();
    redis?.remove();
    redis = undefined;
  });

  async function readyz(): Promise<{ status: number; body: Report }> {
    const res = await fetch(`${stack!.reflex.http!.url}/readyz`);
    return { status: res.status, body: (await res.json()) as Report };
  }

  it('turns /readyz 503 naming Redis, alerts critical by the fallback path, and heals what crashed meanwhile once it takes writes again', async () => {
    redis = await ownRedis();
    stack = await startStack({
      redisUrl: redis.url,
      label: 'redis-full',
      webhook: true,
      instances: [{ name: 'web-1', config: optIn }],
      config: { httpPort: await freePort() },
    });
    const { sim, webhook } = stack;
    await until('ready', async () => (await readyz()).status === 200, 15_000);
    const bodies = () => webhook!.requests.map((r) => r.json as Body);
    const memoryAlerts = () => bodies().flatMap((b) => b.alerts.filter((a) => a.kind === 'redis.memory-high'));

    await stack.redis.config('SET', 'maxmemory', '1');
    const full = Date.now();
    const notReady = await until('/readyz 503', async () => ((await readyz()).status === 503 ? readyz() : undefined), 15_000, 100);
    expect(Date.now() - full).toBeLessThan(15_000);
    expect(notReady.body.checks['redis-writes']).toEqual({
      ok: false,
      detail: expect.stringMatching(/^Redis refuses writes \(OOM: used memory above maxmemory\) for \d+ s: automation has stopped/),
    });

    const critical = await until('the critical alert at the receiver', () => memoryAlerts().find((a) => a.status === 'firing'), 15_000);
    expect(critical.severity).toBe('critical');
    expect(critical.summary).toMatch(/^Redis is full and refuses writes \(OOM: .* used, maxmemory 1 B\): automation has stopped/);

    // A crash while nothing can be queued: the subscriber holds the event until Redis takes it.
    sim.controls.crash('web-1');
    await until('the crash seen by the daemon', () => sim.controls.statusCode('web-1') !== 103);
    expect(sim.controls.calls('web-1', 'start')).toBe(0);

    await stack.redis.config('SET', 'maxmemory', '0');
    await until('ready again', async () => (await readyz()).status === 200, 15_000, 100);
    await until(
      'web-1 healed after the outage',
      () => sim.controls.statusCode('web-1') === 103 && sim.controls.calls('web-1', 'start') === 1,
      20_000,
    );
    const resolved = await until('the resolution at the receiver', () => memoryAlerts().find((a) => a.status === 'resolved'), 15_000);
    expect(resolved.summary).toMatch(/^Redis takes writes again: automation resumed/);
    // One replica: one message of each.
    expect(memoryAlerts().map((a) => `${a.severity}:${a.status}`)).toEqual(['critical:firing', 'critical:resolved']);

    // Audited once Redis took writes again: the alert and its resolution, each saying whom it reached.
    const trail = await new AuditLog(stack.redis, stack.keys.audit).read({ instance: 'redis' });
    const direct = trail.map((r) => r as Record<string, unknown>).filter((r) => r.sentDirectly);
    expect(direct.map((r) => [r.kind, r.severity, r.sentDirectly])).toEqual([
      ['redis.memory-high', 'critical', ['hook']],
      ['redis.memory-high', 'info', ['hook']],
    ]);
  });

  it('starts a replica on a Redis already full, with a history store, not ready until Redis takes writes, then ready', async () => {
    redis = await ownRedis();
    const probe = redisFromUrl(redis.url);
    try {
      await probe.set('x', 'y');
      await probe.config('SET', 'maxmemory', '1');
    } finally {
      probe.disconnect();
    }
    const dir = mkdtempSync(join(tmpdir(), 'reflex-full-start-'));
    try {
      // The worker marks the audit stream as shipped from at its start: refused, it stopped the start.
      stack = await startStack({
        redisUrl: redis.url,
        label: 'redis-full-start',
        instances: [{ name: 'web-1', config: optIn }],
        // Its start-up resync cannot publish until Redis takes writes again.
        resynced: false,
        config: { httpPort: await freePort(), history: { store: 'files', dir } },
      });
      const notReady = await until('/readyz 503', async () => ((await readyz()).status === 503 ? readyz() : undefined), 15_000, 100);
      expect(notReady.body.checks['redis-writes']?.detail).toMatch(/^Redis refuses writes \(OOM/);
      await stack.redis.config('SET', 'maxmemory', '0');
      await until('ready once Redis takes writes', async () => (await readyz()).status === 200, 30_000, 200);
    } finally {
      // The stack writes its history into `dir` while it runs (a write during the removal failed it
      // with ENOTEMPTY): it stops first.
      await stopStack();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends one copy of the alert per replica, under one message id that receivers de-duplicate', async () => {
    redis = await ownRedis();
    stack = await startStack({ redisUrl: redis.url, label: 'redis-full-2', webhook: true, config: { httpPort: await freePort() } });
    await stack.replica({ httpPort: await freePort() });
    const { webhook } = stack;
    await until('ready', async () => (await readyz()).status === 200, 15_000);
    const sent = (status: string) =>
      webhook!.requests.filter((r) => (r.json as Body).alerts.some((a) => a.kind === 'redis.memory-high' && a.status === status));

    await stack.redis.config('SET', 'maxmemory', '1');
    await until("both replicas' critical alert", () => sent('firing').length === 2, 15_000);
    await stack.redis.config('SET', 'maxmemory', '0');
    await until("both replicas' resolution", () => sent('resolved').length === 2, 15_000);
    const ids = (status: string) => new Set(sent(status).map((r) => r.headers['webhook-id']));
    expect(ids('firing').size).toBe(1);
    expect(ids('resolved').size).toBe(1);
    expect([...ids('firing')]).not.toEqual([...ids('resolved')]);
  });
});
