import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { STATUS_RUNNING, TEST_IMAGE, TEST_INSTANCE_PREFIX, lxc, lxdSocketPath, type InstanceStatus } from './lxd-bed.js';
import { startReflexProcess, type ReflexProcess } from './reflex-process.js';
import { freePort } from './free-port.js';

/**
 * Helpers for the remediation acceptance tests (test/remediation): a redis-server the test owns
 * and can pause, LXD projects and project-aware variants of the lxd-bed instance helpers, and
 * `reflex run` with the flags these tests share. Everything goes through processes an operator
 * would run (redis-server, lxc, reflex); nothing here imports Reflex's source.
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
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}) before answering on ${url}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (err) {
      if (Date.now() > until) throw new Error(`redis-server on ${url} did not answer within 10 s: ${String(err)}`);
    } finally {
      probe.disconnect();
    }
    await sleep(50);
  }
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

/**
 * `reflex run` against the local LXD socket with the bundled rules, as an operator starts it.
 * The HTTP server is off (`--http-port 0`) so that several replicas can run side by side.
 */
export function startReflexRun(redisUrl: string, prefix: string, env: Record<string, string> = {}, extra: string[] = []): ReflexProcess {
  return startReflexProcess(
    ['run', '--target', `unix://${lxdSocketPath()}`, '--redis', redisUrl, '--prefix', prefix, '--rules', 'rules', '--http-port', '0', ...extra],
    { REFLEX_LOG_LEVEL: 'info', ...env },
  );
}

/**
 * Creates an LXD project for instances named like ones in `default`. On LXD 5.0.2 a project made
 * with features.images/profiles/storage.volumes off uses the default project's images, profiles
 * and volumes, so the test image and the root disk of the default profile work there unchanged.
 */
export async function createTestProject(): Promise<string> {
  const project = `${TEST_INSTANCE_PREFIX}proj-${randomBytes(3).toString('hex')}`;
  await lxc(['project', 'create', project, '-c', 'features.images=false', '-c', 'features.profiles=false', '-c', 'features.storage.volumes=false']);
  return project;
}

/** Deletes the project (its instances must be gone); a project that does not exist is not an error. */
export async function deleteTestProject(project: string): Promise<void> {
  try {
    await lxc(['project', 'delete', project]);
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
  }
}

/** Like lxd-bed's launchTestInstance, in `project`, with a given name (the point is to reuse one). */
export async function launchInProject(project: string, name: string, config: Record<string, string> = {}): Promise<void> {
  const all = { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit', ...config };
  await lxc(['init', TEST_IMAGE, name, '--project', project, ...Object.entries(all).flatMap(([k, v]) => ['-c', `${k}=${v}`])]);
  try {
    await lxc(['start', name, '--project', project]);
    await waitForStatusIn(project, name, STATUS_RUNNING, 10_000);
  } catch (err) {
    await deleteInProject(project, name).catch(() => undefined);
    throw err;
  }
}

export async function instanceStatusIn(project: string, name: string): Promise<InstanceStatus> {
  const state = JSON.parse(await lxc(['query', `/1.0/instances/${name}/state?project=${encodeURIComponent(project)}`], 10_000)) as InstanceStatus;
  return { status: state.status, status_code: state.status_code, pid: state.pid };
}

/** SIGKILL of the instance's init from the host, as lxd-bed's crashInstance, in `project`. */
export async function crashInProject(project: string, name: string): Promise<void> {
  const { pid, status } = await instanceStatusIn(project, name);
  if (pid <= 0) throw new Error(`cannot crash ${project}/${name}: it has no init process (status ${status})`);
  process.kill(pid, 'SIGKILL');
}

/** Polls the instance's state every 50 ms until its status code is `code`; throws naming the last status seen. */
export async function waitForStatusIn(project: string, name: string, code: number, timeoutMs: number): Promise<void> {
  const start = Date.now();
  let last = 'none yet';
  for (;;) {
    try {
      const state = await instanceStatusIn(project, name);
      if (state.status_code === code) return;
      last = `${state.status} (${state.status_code})`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() - start >= timeoutMs) throw new Error(`${project}/${name} did not reach status ${code} within ${timeoutMs} ms; last seen: ${last}`);
    await sleep(50);
  }
}

/** Force-deletes the instance in `project`, waiting out a busy stop hook; a missing one is not an error. */
export async function deleteInProject(project: string, name: string): Promise<void> {
  const until = Date.now() + 5_000;
  for (;;) {
    try {
      await lxc(['delete', '-f', name, '--project', project]);
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (/not found/i.test(message)) return;
      if (!/busy running/i.test(message) || Date.now() > until) throw err;
      await sleep(100);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
