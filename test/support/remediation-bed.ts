import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/**
 * A redis-server the remediation acceptance tests (test/remediation) own and can pause, started as
 * an operator would start one; nothing here imports Reflex's source.
 */

/** A redis-server started by a test, which it can freeze (SIGSTOP) like a host that stopped answering. */
export interface PausableRedis {
  url: string;
  /** SIGSTOP: connections stay open, nothing is answered. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  stop(): Promise<void>;
}

/** Starts `redis-server --save '' --appendonly no` on a free loopback port and waits until it answers PING. */
export async function startPausableRedis(): Promise<PausableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'reflex-pausable-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  await until(
    `redis-server to answer PING on ${url}`,
    async () => {
      if (child.exitCode !== null) return `exited (${child.exitCode})`;
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
        return 'answers';
      } finally {
        probe.disconnect();
      }
    },
    10_000,
    50,
  ).then((state) => {
    if (state !== 'answers') throw new Error(`redis-server ${state} before answering on ${url}`);
  });
  let paused = false;
  return {
    url,
    pause() {
      child.kill('SIGSTOP');
      paused = true;
    },
    resume() {
      child.kill('SIGCONT');
      paused = false;
    },
    async stop() {
      if (child.exitCode === null) {
        if (paused) child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
