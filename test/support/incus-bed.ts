import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { STATUS_RUNNING, TEST_IMAGE, TEST_INSTANCE_PREFIX, acquireLxdLock, type InstanceStatus } from './lxd-bed.js';
import { startReflexProcess, type ReflexProcess } from './reflex-process.js';

/**
 * Helpers for test suites that drive the real Incus daemon prepared by scripts/incus-testbed.sh,
 * beside LXD. Like lxd-bed.ts they go through the daemon's own CLI (`incus`), never the client
 * under test, and they hold the same cross-process lock: one real-daemon suite at a time on the
 * machine, whichever daemon it drives.
 */

const run = promisify(execFile);

/** The socket of the Debian package's `incusd`. */
export const INCUS_SOCKET = '/var/lib/incus/unix.socket';
/** How long a suite may wait for the shared lock (another file's real-daemon suite holds it meanwhile). */
const LOCK_WAIT_MS = 11 * 60_000;

/**
 * Runs `incus` against {@link INCUS_SOCKET} and returns its stdout; errors carry incus' stderr.
 * @param timeoutMs kill incus after this long (default 30 000).
 */
export async function incus(args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const pending = run('incus', args, { timeout: timeoutMs, env: { ...process.env, INCUS_SOCKET } });
    // `incus init` reads instance YAML from stdin when it is not a terminal: give it an empty one.
    pending.child.stdin?.end();
    return (await pending).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    const detail = e.killed ? `timed out after ${timeoutMs} ms` : (e.stderr?.trim() || e.message);
    throw new Error(`incus ${args.join(' ')}: ${detail}`, { cause: err });
  }
}

let reachable: Promise<boolean> | undefined;

/** Whether Incus answers `incus query /1.0` (three tries of 10 s: a busy daemon is not a missing one). */
export function incusReachable(): Promise<boolean> {
  reachable ??= (async () => {
    try {
      if (!statSync(INCUS_SOCKET).isSocket()) return false;
    } catch {
      return false;
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const server = JSON.parse(await incus(['query', '/1.0'], 10_000)) as { environment?: { server?: string } };
        return server.environment?.server === 'incus';
      } catch {
        await sleep(1_000);
      }
    }
    return false;
  })();
  return reachable;
}

/** True when REFLEX_REQUIRE_INCUS=1: a missing Incus then fails the real-Incus suites instead of skipping them. */
export function requireIncus(): boolean {
  return process.env.REFLEX_REQUIRE_INCUS === '1';
}

/**
 * Declares a suite that needs the real Incus daemon; await it at the top level of a test file, like
 * lxd-bed's describeLxd. Without a daemon the suite is skipped, unless REFLEX_REQUIRE_INCUS=1 (as in
 * CI), in which case it fails saying how to get one.
 */
export async function describeIncus(name: string, body: () => void): Promise<void> {
  if (await incusReachable()) {
    describe(name, () => {
      let release: (() => Promise<void>) | undefined;
      beforeAll(async () => {
        release = await acquireLxdLock();
      }, LOCK_WAIT_MS);
      afterAll(async () => {
        await release?.();
      });
      body();
    });
    return;
  }
  if (requireIncus()) {
    describe(name, () => {
      it('needs a real Incus daemon', () => {
        throw new Error(`real Incus required (REFLEX_REQUIRE_INCUS=1) but no Incus daemon answers at ${INCUS_SOCKET}; run scripts/incus-testbed.sh as root`);
      });
    });
    return;
  }
  if (!skipNoticePrinted) {
    skipNoticePrinted = true;
    process.stderr.write('real-Incus suite skipped: no Incus daemon reachable (run scripts/incus-testbed.sh as root to enable)\n');
  }
  describe.skip(name, body);
}

let skipNoticePrinted = false;

/** Options for {@link launchIncusInstance}. */
export interface IncusLaunchOptions {
  /** Extra instance config keys, set at creation. */
  config?: Record<string, string>;
  /** The container's init command (raw.lxc `lxc.init.cmd`). Default: `/sbin/testinit`. */
  init?: string;
  /** Files written into the stopped instance before its first start: path in the guest → content (mode 0755). */
  files?: Record<string, string>;
  /** Start it and wait for Running (default true). */
  start?: boolean;
}

/** Creates an instance from the test image (and by default starts it). Returns its name. */
export async function launchIncusInstance(opts: IncusLaunchOptions = {}): Promise<string> {
  const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
  const config = { 'raw.lxc': `lxc.init.cmd=${opts.init ?? '/sbin/testinit'}`, ...opts.config };
  await incus(['init', TEST_IMAGE, name, ...Object.entries(config).flatMap(([k, v]) => ['-c', `${k}=${v}`])]);
  try {
    for (const [path, content] of Object.entries(opts.files ?? {})) await pushFile(name, path, content);
    if (opts.start !== false) {
      await incus(['start', name]);
      await waitForIncusStatus(name, STATUS_RUNNING, 10_000);
    }
  } catch (err) {
    await deleteIncusInstance(name).catch(() => undefined);
    throw err;
  }
  return name;
}

async function pushFile(name: string, path: string, content: string): Promise<void> {
  const pending = run('incus', ['file', 'push', '--mode', '0755', '-', `${name}${path}`], { timeout: 30_000, env: { ...process.env, INCUS_SOCKET } });
  pending.child.stdin?.end(content);
  await pending;
}

export async function incusInstanceStatus(name: string): Promise<InstanceStatus> {
  const state = JSON.parse(await incus(['query', `/1.0/instances/${name}/state`], 10_000)) as InstanceStatus;
  return { status: state.status, status_code: state.status_code, pid: state.pid };
}

/** SIGKILL of the instance's init from the host, as a crash would (needs root). */
export async function crashIncusInstance(name: string): Promise<void> {
  const { pid, status } = await incusInstanceStatus(name);
  if (pid <= 0) throw new Error(`cannot crash ${name}: it has no init process (status ${status})`);
  process.kill(pid, 'SIGKILL');
}

/** Polls the instance's state every 50 ms until its status code is `code`; returns the milliseconds it took. */
export async function waitForIncusStatus(name: string, code: number, timeoutMs: number): Promise<number> {
  const start = performance.now();
  let last = 'none yet';
  for (;;) {
    try {
      const state = await incusInstanceStatus(name);
      if (state.status_code === code) return performance.now() - start;
      last = `${state.status} (${state.status_code})`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (performance.now() - start >= timeoutMs) throw new Error(`${name} did not reach status ${code} within ${timeoutMs} ms; last seen: ${last}`);
    await sleep(50);
  }
}

/** Force-deletes the instance, waiting out a stop hook that keeps it busy; a missing one is not an error. */
export async function deleteIncusInstance(name: string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      await incus(['delete', '-f', name]);
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (/not found/i.test(message)) return;
      if (Date.now() > until) throw err;
      await sleep(200);
    }
  }
}

/** `reflex run` against the Incus socket with the bundled rules, the HTTP server off. */
export function startReflexOnIncus(redisUrl: string, prefix: string, extra: string[] = []): ReflexProcess {
  return startReflexProcess(
    ['run', '--target', `unix://${INCUS_SOCKET}`, '--redis', redisUrl, '--prefix', prefix, '--rules', 'rules', '--http-port', '0', ...extra],
    { REFLEX_LOG_LEVEL: 'info' },
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
