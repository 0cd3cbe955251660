import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { open, readFile, rename, unlink, link, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, it } from 'vitest';

/**
 * Helpers for test suites that drive the real LXD daemon prepared by scripts/lxd-testbed.sh.
 * They go through the `lxc` CLI on purpose: the test bed must not depend on the client under test.
 */

const run = promisify(execFile);

const SOCKET_CANDIDATES = [
  '/var/lib/lxd/unix.socket',
  '/var/snap/lxd/common/lxd/unix.socket',
  '/var/lib/incus/unix.socket',
];

/** The image scripts/lxd-testbed.sh imports: busybox with `/sbin/testinit`. */
export const TEST_IMAGE = 'reflex-busybox';
/** Names of instances the helpers create start with this; the test bed script deletes leftovers. */
export const TEST_INSTANCE_PREFIX = 'rt-';
/** LXD status codes the helpers wait for. */
export const STATUS_RUNNING = 103;
export const STATUS_STOPPED = 102;

const LOCK_PATH = '/tmp/reflex-real-lxd.lock';
const LOCK_STALE_MS = 10 * 60_000;
const LOCK_POLL_MS = 200;

/** The first existing LXD (or Incus) unix socket, or undefined when there is none. */
export function lxdSocketPath(): string | undefined {
  for (const path of SOCKET_CANDIDATES) {
    try {
      if (statSync(path).isSocket()) return path;
    } catch {
      // Not there: try the next one.
    }
  }
  return undefined;
}

/**
 * Runs `lxc` against the socket {@link lxdSocketPath} found and returns its stdout.
 * Errors carry lxc's stderr in the message.
 * @param timeoutMs kill lxc after this long (default 30 000).
 */
export async function lxc(args: string[], timeoutMs = 30_000): Promise<string> {
  const socket = lxdSocketPath();
  try {
    const pending = run('lxc', args, {
      timeout: timeoutMs,
      env: socket ? { ...process.env, LXD_SOCKET: socket } : process.env,
    });
    // `lxc init` reads instance YAML from stdin when it is not a terminal: give it an empty one.
    pending.child.stdin?.end();
    return (await pending).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    const detail = e.killed ? `timed out after ${timeoutMs} ms` : (e.stderr?.trim() || e.message);
    throw new Error(`lxc ${args.join(' ')}: ${detail}`, { cause: err });
  }
}

let reachable: Promise<boolean> | undefined;

/**
 * Whether a daemon answers `lxc query /1.0`. Checked once per process; a daemon busy with other
 * suites' containers can be slow, so a socket that exists gets three tries of 10 s before it is
 * called unreachable (a false "unreachable" would skip, or under REFLEX_REQUIRE_LXD=1 fail, a suite).
 */
export function lxdReachable(): Promise<boolean> {
  reachable ??= (async () => {
    if (!lxdSocketPath()) return false;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await lxc(['query', '/1.0'], 10_000);
        return true;
      } catch {
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    return false;
  })();
  return reachable;
}

/** True when REFLEX_REQUIRE_LXD=1: a missing daemon then fails the real-LXD suites instead of skipping them. */
export function requireLxd(): boolean {
  return process.env.REFLEX_REQUIRE_LXD === '1';
}

let skipNoticePrinted = false;

/**
 * Declares a suite that needs the real daemon. Await it at the top level of a test file:
 *
 *     await describeLxd('a crashed instance is restarted', () => { it(…) });
 *
 * With a reachable daemon the suite runs, holding the cross-process LXD lock for its whole
 * duration. Without one it is skipped (with one notice on stderr), unless REFLEX_REQUIRE_LXD=1,
 * in which case it fails with a message saying how to get a daemon.
 */
export async function describeLxd(name: string, body: () => void): Promise<void> {
  if (await lxdReachable()) {
    describe(name, () => {
      let release: (() => Promise<void>) | undefined;
      // Waiting for another file's suite can take far longer than the default hook timeout.
      beforeAll(async () => {
        release = await acquireLxdLock();
      }, LOCK_STALE_MS + 60_000);
      afterAll(async () => {
        await release?.();
      });
      body();
    });
    return;
  }

  const where = lxdSocketPath() ?? SOCKET_CANDIDATES.join(', ');
  if (requireLxd()) {
    describe(name, () => {
      it('needs a real LXD daemon', () => {
        throw new Error(
          `real LXD required (REFLEX_REQUIRE_LXD=1) but no daemon reachable at ${where}; run scripts/lxd-testbed.sh as root`,
        );
      });
    });
    return;
  }

  if (!skipNoticePrinted) {
    skipNoticePrinted = true;
    process.stderr.write(
      'real-LXD suite skipped: no LXD daemon reachable (run scripts/lxd-testbed.sh as root to enable)\n',
    );
  }
  describe.skip(name, body);
}

/** Options for {@link launchTestInstance}. */
export interface LaunchOptions {
  /** Instance name. Default: `rt-` and 8 random hex digits. */
  name?: string;
  /** Extra instance config keys, set at creation. */
  config?: Record<string, string>;
  /** The container's init command (raw.lxc `lxc.init.cmd`). Default: `/sbin/testinit`. */
  init?: string;
}

/** Creates an instance from the test image, starts it and waits until it is Running. Returns its name. */
export async function launchTestInstance(opts: LaunchOptions = {}): Promise<string> {
  const name = opts.name ?? `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
  const config: Record<string, string> = {
    'raw.lxc': `lxc.init.cmd=${opts.init ?? '/sbin/testinit'}`,
    ...opts.config,
  };
  const configArgs = Object.entries(config).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
  await lxc(['init', TEST_IMAGE, name, ...configArgs]);
  try {
    await lxc(['start', name]);
    await waitForStatus(name, STATUS_RUNNING, 10_000);
  } catch (err) {
    await deleteTestInstance(name).catch(() => undefined);
    throw err;
  }
  return name;
}

/** The part of `GET /1.0/instances/NAME/state` the tests look at. `pid` is 0 when stopped. */
export interface InstanceStatus {
  status: string;
  status_code: number;
  pid: number;
}

export async function instanceStatus(name: string): Promise<InstanceStatus> {
  const state = JSON.parse(await lxc(['query', `/1.0/instances/${name}/state`], 10_000)) as InstanceStatus;
  return { status: state.status, status_code: state.status_code, pid: state.pid };
}

/** Kills the instance's init with SIGKILL from the host, as a crash would (needs root). */
export async function crashInstance(name: string): Promise<void> {
  const { pid, status } = await instanceStatus(name);
  if (pid <= 0) throw new Error(`cannot crash ${name}: it has no init process (status ${status})`);
  process.kill(pid, 'SIGKILL');
}

/**
 * Polls the instance's state every 50 ms until its status code is `code`.
 * @returns the milliseconds it took.
 * @throws when `timeoutMs` passes first, naming the last status seen.
 */
export async function waitForStatus(name: string, code: number, timeoutMs: number): Promise<number> {
  const start = performance.now();
  let last = 'none yet';
  for (;;) {
    try {
      const state = await instanceStatus(name);
      if (state.status_code === code) return performance.now() - start;
      last = `${state.status} (${state.status_code})`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (performance.now() - start >= timeoutMs) {
      throw new Error(`${name} did not reach status ${code} within ${timeoutMs} ms; last seen: ${last}`);
    }
    await sleep(50);
  }
}

/**
 * Runs an lxc state change, retrying while LXD still reports the instance busy: right after a
 * crash, LXD runs its stop hook (~0.6 s) and refuses other state changes meanwhile.
 */
async function retryWhileBusy(args: string[], timeoutMs = 5_000): Promise<void> {
  const start = performance.now();
  for (;;) {
    try {
      await lxc(args);
      return;
    } catch (err) {
      const busy = /busy running/i.test((err as Error).message);
      if (!busy || performance.now() - start >= timeoutMs) throw err;
      await sleep(100);
    }
  }
}

/** Starts a stopped instance (e.g. after {@link crashInstance}), waiting out LXD's stop hook. */
export async function startInstance(name: string): Promise<void> {
  await retryWhileBusy(['start', name]);
}

/** Force-deletes the instance; an instance that does not exist is not an error. */
export async function deleteTestInstance(name: string): Promise<void> {
  try {
    await retryWhileBusy(['delete', '-f', name]);
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
  }
}

/**
 * Takes the lock that serialises real-LXD suites across vitest workers and concurrent test runs
 * on this machine, waiting as long as it is held. Returns the function that releases it.
 *
 * The lock is a file created with O_EXCL holding the owner's pid. It is taken over when that
 * process is gone or the file has not been refreshed for 10 minutes (the owner refreshes it
 * every minute), so a killed test run never blocks the next one for long.
 */
export async function acquireLxdLock(): Promise<() => Promise<void>> {
  const token = `${process.pid} ${hostname()} ${randomBytes(6).toString('hex')}`;
  for (;;) {
    try {
      const file = await open(LOCK_PATH, 'wx');
      await file.writeFile(token);
      await file.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    await takeOverIfStale();
    await sleep(LOCK_POLL_MS);
  }

  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(LOCK_PATH, now, now).catch(() => undefined);
  }, 60_000);
  heartbeat.unref();

  return async () => {
    clearInterval(heartbeat);
    // Only remove the lock if it is still ours (it may have been taken over as stale).
    const current = await readFile(LOCK_PATH, 'utf8').catch(() => undefined);
    if (current === token) await unlink(LOCK_PATH).catch(() => undefined);
  };
}

async function takeOverIfStale(): Promise<void> {
  let content: string;
  let mtimeMs: number;
  try {
    content = await readFile(LOCK_PATH, 'utf8');
    mtimeMs = statSync(LOCK_PATH).mtimeMs;
  } catch {
    return; // Released meanwhile.
  }
  if (!lockIsStale(content, mtimeMs)) return;

  // Move the stale file aside rather than unlinking it: if another waiter replaced it in the
  // meantime, we have moved a live lock and must put it back.
  const aside = `${LOCK_PATH}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(LOCK_PATH, aside);
  } catch {
    return;
  }
  const moved = await readFile(aside, 'utf8').catch(() => content);
  if (moved !== content) await link(aside, LOCK_PATH).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

function lockIsStale(content: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return true;
  const [pidText, host] = content.split(' ');
  const pid = Number(pidText);
  // Written but not yet filled in, or held from another machine sharing /tmp: trust the age only.
  if (!Number.isInteger(pid) || pid <= 0 || host !== hostname()) return false;
  return !processAlive(pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  // A zombie still answers kill(0). Orphaned vitest workers can linger as zombies where PID 1
  // does not reap promptly (as on the CI container), so read its state.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
