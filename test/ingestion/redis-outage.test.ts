import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { optIn, sleep, startIngestionBed, until, type IngestionBed } from './support/ingestion-bed.js';

/** A redis-server of this test's own that can be stopped and started again on the same port and data. */
async function ownRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-redis-'));
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], { stdio: 'ignore' });
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
    probe.on('error', () => {});
    await until(async () => (await probe.ping().catch(() => '')) === 'PONG', 10_000, 'redis up');
    probe.disconnect();
  };
  const stop = async () => {
    const c = child!;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  return { url, start, stop, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

let redis: Awaited<ReturnType<typeof ownRedis>> | undefined;
let bed: IngestionBed | undefined;
afterAll(async () => {
  await bed?.stop().catch(() => undefined);
  await redis?.stop().catch(() => undefined);
  redis?.remove();
});

it('holds events while Redis is down and resyncs after: a crash during the outage is caught once', async () => {
  redis = await ownRedis();
  bed = await startIngestionBed({ url: redis.url });
  const b = bed;
  b.sim.controls.addInstance({ name: 'c1', config: optIn });
  await until(() => b.reflex.subscriber?.connected === true, 10_000, 'connected');
  await b.reflex.resync();
  await sleep(500);

  await redis.stop();
  b.sim.controls.crash('c1'); // its event reaches Reflex while Redis is down
  await sleep(4_000); // longer than the lease TTL: the holder steps down
  expect(b.sim.controls.statusCode('c1')).toBe(102);
  await redis.start();

  await until(() => b.sim.controls.statusCode('c1') === 103, 20_000, 'c1 restarted');
  const trail = await b.waitTrail('c1', 2, 10_000);
  expect(trail).toHaveLength(2);
  expect(trail[0]).toMatch(/^103→102 (unrequested|unknown)/);
  expect(trail[1]).toBe('102→103 self');
  expect(b.sim.controls.calls('c1', 'start')).toBe(1);
  expect(b.reflex.subscriber?.connected).toBe(true);
}, 60_000);
