import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ReflexError } from '../errors/reflex-error.js';
import { freePort } from './free-port.js';

/** A redis-server process owned by the caller (a test run, the demo, a benchmark). */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

async function waitForPing(url: string, child: ChildProcess, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  let lastError: unknown;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new ReflexError('REDIS_UNAVAILABLE', `redis-server exited with code ${child.exitCode} before answering`);
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {}); // refused until the server listens: expected while polling
    try {
      await redis.connect();
      await redis.ping();
      return;
    } catch (err) {
      lastError = err;
    } finally {
      redis.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new ReflexError('REDIS_UNAVAILABLE', `redis-server did not answer within ${deadlineMs} ms: ${String(lastError)}`);
}

/**
 * Starts a private `redis-server` on a free loopback port with its data in a temp dir (AOF only
 * when asked: restart scenarios). Throws REDIS_UNAVAILABLE when there is no `redis-server` to
 * start or it does not answer.
 */
export async function startPrivateRedis(opts: { appendonly?: boolean } = {}): Promise<PrivateRedis> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    throw new ReflexError(
      'REDIS_UNAVAILABLE',
      'No Redis available: set REDIS_URL=redis://host:port, or install redis-server (Debian: apt-get install redis-server) so a private one can be started.',
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'reflex-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', opts.appendonly ? 'yes' : 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitForPing(url, child, 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
