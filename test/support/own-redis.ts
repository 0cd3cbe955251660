import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/** A redis-server of a test's own (AOF on) that can be stopped and started again on the same port and data: a Redis outage. */
export interface OwnRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Removes its data directory (after the last stop). */
  remove(): void;
}

export async function ownRedis(): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], {
      stdio: 'ignore',
    });
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
    probe.on('error', () => {});
    try {
      await until(`own redis-server on port ${port} answering`, async () => (await probe.ping()) === 'PONG', 10_000, 50);
    } finally {
      probe.disconnect();
    }
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  return { url, start, stop, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
