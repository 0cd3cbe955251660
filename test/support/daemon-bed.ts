import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { appendFile, link, open, readFile, rename, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startReflexProcess, type ReflexProcess } from './reflex-process.js';
import { sleep, until } from './wait.js';

/**
 * One real daemon as the tests drive it: LXD (scripts/lxd-testbed.sh), Incus beside it
 * (scripts/incus-testbed.sh), or the two-member LXD cluster (scripts/lxd-cluster-testbed.sh),
 * reached through one member. Every bed goes through the daemon's own CLI (`lxc`, `incus`), never
 * the client under test, and every real-daemon suite holds its daemon's cross-process lock: one
 * suite at a time on each daemon (a Reflex under test reacts to every instance of the daemon it
 * watches, so two suites on one daemon would heal each other's crashes), while suites on LXD, Incus
 * and the LXD cluster (separate daemons) run side by side.
 *
 * A test written once for both daemons:
 *
 *     await describeEachBed('a crashed container comes back by itself', (bed) => { it(…) });
 */

/** The image the test bed scripts import: busybox with `/sbin/testinit`. */
export const TEST_IMAGE = 'reflex-busybox';
/** Names of instances the helpers create start with this; the test bed scripts delete leftovers. */
export const TEST_INSTANCE_PREFIX = 'rt-';
/** Status codes the helpers wait for (the same on LXD and Incus). */
export const STATUS_RUNNING = 103;
export const STATUS_STOPPED = 102;

/** The part of `GET /1.0/instances/NAME/state` the tests look at. `pid` is 0 when stopped. */
export interface InstanceStatus {
  status: string;
  status_code: number;
  pid: number;
}

/** Options for {@link DaemonBed.launch}. */
export interface LaunchOptions {
  /** Instance name. Default: the bed's prefix and 8 random hex digits. */
  name?: string;
  /** Extra instance config keys, set at creation. */
  config?: Record<string, string>;
  /** The container's init command (raw.lxc `lxc.init.cmd`). Default: `/sbin/testinit`. */
  init?: string;
  /** Files written into the stopped instance before its first start: path in the guest → content (mode 0755). */
  files?: Record<string, string>;
  /** Start it and wait for Running (default true). */
  start?: boolean;
  /** The cluster member to create it on (`--target`); a cluster bed only. */
  member?: string;
}

/** A lifecycle event as the daemon sent it, with its timestamp in ms. */
export interface LifecycleEvent {
  at: number;
  /** The instance it is about; empty for the server's own events (`/1.0`). */
  instance: string;
  action: string;
}

/** The daemon's lifecycle events from the moment the monitor started (`lxc monitor --type=lifecycle`). */
export interface LifecycleMonitor {
  readonly events: readonly LifecycleEvent[];
  /** Resolves once the monitor listens: it has heard a change of the server's config the bed makes for that purpose. */
  listening(): Promise<void>;
  /** Waits until the monitor has heard `action` of `instance` and returns the first such event. */
  heard(instance: string, action: string, timeoutMs?: number): Promise<LifecycleEvent>;
  stop(): void;
}

/** What a real-daemon test needs of a daemon. */
export interface DaemonBed {
  /** For suite names and messages: `LXD 5.0`, `Incus 6.0`, `LXD cluster`. */
  readonly name: string;
  /** The daemon's family, for the few places where the two differ (a message, a default). */
  readonly kind: 'lxd' | 'incus';
  /** The daemon's CLI, as hints in Reflex's messages name it. */
  readonly cliName: 'lxc' | 'incus';
  /** The unix socket Reflex connects to. */
  readonly socket: string;
  /** `unix://` and {@link socket}: Reflex's `--target`. */
  readonly target: string;
  /** Runs the CLI against the bed's daemon; returns stdout, rejects with its stderr. */
  cli(args: string[], timeoutMs?: number): Promise<string>;
  /** Creates an instance from the test image and, unless told, starts it and waits until it is Running. Returns its name. */
  launch(opts?: LaunchOptions): Promise<string>;
  status(name: string): Promise<InstanceStatus>;
  /** Polls every 50 ms until the status code is `code`; returns the milliseconds it took, throws naming the last status seen. */
  waitForStatus(name: string, code: number, timeoutMs?: number): Promise<number>;
  /** SIGKILL of the instance's init from the host, as a crash would (needs root). */
  crash(name: string): Promise<void>;
  /** Starts a stopped instance, waiting out the stop hook that keeps it busy right after a crash. */
  start(name: string): Promise<void>;
  /** Force-deletes the instance, waiting out a busy stop hook; one that does not exist is not an error. */
  remove(name: string): Promise<void>;
  /**
   * Listens to the daemon's lifecycle events, as `lxc monitor` does. The CLI says nothing when it has
   * connected: await {@link LifecycleMonitor.listening} before causing the events to hear.
   */
  monitor(): LifecycleMonitor;
  /** Whether the daemon answers (asked once per process). */
  reachable(): Promise<boolean>;
  /** The same daemon, its instances in `project` (created with {@link createTestProject}). */
  inProject(project: string): DaemonBed;
  /** Whether this run requires the daemon (REFLEX_REQUIRE_LXD=1, …): then its absence fails the suites instead of skipping them. */
  required(): boolean;
  /** Why it is missing and how to get it, for the failing test or the skip notice. */
  readonly missing: string;
  /** The daemon's cross-process lock ({@link acquireDaemonLock}): one suite at a time per daemon. */
  readonly lock: DaemonLock;
}

/** The daemons a lock serialises suites on: each is a daemon (or cluster) of its own. */
export type DaemonLock = 'lxd' | 'incus' | 'lxd-cluster';

/** How one bed reaches its daemon: everything else is common. */
interface BedSpec {
  name: string;
  kind: 'lxd' | 'incus';
  cliName: 'lxc' | 'incus';
  socket(): string;
  /** Environment of the CLI (its socket, its daemon directory). */
  env(): Record<string, string>;
  /** Whether `GET /1.0` comes from the daemon this bed wants. */
  isWanted(server: { environment?: { server?: string; server_clustered?: boolean } }): boolean;
  requiredBy: string;
  setup: string;
  prefix?: string;
  /** Errors of a state change that mean "try again in a moment" (default: the busy stop hook). */
  busy?: RegExp;
  /** The project the bed's instances are in (default: the daemon's default project). */
  project?: string;
  /** How long {@link DaemonBed.remove} keeps trying while the daemon is busy (default 10 s). */
  removeWithinMs?: number;
  /** The daemon's lock (default: its kind's, `lxd` or `incus`). */
  lock?: DaemonLock;
}

const run = promisify(execFile);

/** Builds a bed from its spec. */
export function daemonBed(spec: BedSpec): DaemonBed {
  const prefix = spec.prefix ?? TEST_INSTANCE_PREFIX;
  const busy = spec.busy ?? /busy running/i;
  let reachable: Promise<boolean> | undefined;
  /** An instance command in the bed's project. */
  const scoped = (args: string[]) => (spec.project ? [...args, '--project', spec.project] : args);
  const query = spec.project ? `?project=${encodeURIComponent(spec.project)}` : '';

  async function cli(args: string[], timeoutMs = 30_000, input = ''): Promise<string> {
    try {
      const pending = run(spec.cliName, args, { timeout: timeoutMs, env: { ...process.env, ...spec.env() } });
      // `init` reads instance YAML from stdin when it is not a terminal: give it an empty one. A
      // command that exits before reading it closes the pipe: that EPIPE is no failure of the run
      // (the exit code says what happened).
      pending.child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') throw err;
      });
      pending.child.stdin?.end(input);
      return (await pending).stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
      const detail = e.killed ? `timed out after ${timeoutMs} ms` : e.stderr?.trim() || e.message;
      throw new Error(`${spec.cliName} ${args.join(' ')}: ${detail}`, { cause: err });
    }
  }

  /**
   * Runs a state change, retrying while the daemon reports the instance busy (its stop hook runs
   * ~0.6 s after a crash), or while `transient` matches what it says.
   */
  async function whileBusy(args: string[], timeoutMs: number, transient?: RegExp): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        await cli(args);
        return;
      } catch (err) {
        const message = (err as Error).message;
        if (!(busy.test(message) || transient?.test(message)) || Date.now() >= end) throw err;
      }
      await sleep(100); // the poll interval of this wait on the daemon
    }
  }

  async function status(name: string): Promise<InstanceStatus> {
    const state = JSON.parse(await cli(['query', `/1.0/instances/${name}/state${query}`], 10_000)) as InstanceStatus;
    return { status: state.status, status_code: state.status_code, pid: state.pid };
  }

  async function waitForStatus(name: string, code: number, timeoutMs = 10_000): Promise<number> {
    const start = performance.now();
    return until(
      `${name} to reach status ${code} on ${spec.name}`,
      async () => {
        const s = await status(name);
        if (s.status_code === code) return performance.now() - start;
        throw new Error(`last seen ${s.status} (${s.status_code})`);
      },
      timeoutMs,
      50,
    );
  }

  async function remove(name: string): Promise<void> {
    try {
      // A force stop that finds the instance already stopping on its own fails ("Stopping the
      // instance failed: container is not running", Incus 6.0 under load): the next try deletes it.
      await whileBusy(scoped(['delete', '-f', name]), spec.removeWithinMs ?? 10_000, /container is not running/);
    } catch (err) {
      if (!/not found/i.test((err as Error).message)) throw err;
    }
  }

  return {
    name: spec.name,
    kind: spec.kind,
    cliName: spec.cliName,
    lock: spec.lock ?? spec.kind,
    get socket() {
      return spec.socket();
    },
    get target() {
      return `unix://${spec.socket()}`;
    },
    get missing() {
      return `no ${spec.name} daemon answers at ${spec.socket()}; ${spec.setup}`;
    },
    cli: (args, timeoutMs) => cli(args, timeoutMs),
    status,
    waitForStatus,
    remove,
    async launch(opts = {}) {
      const name = opts.name ?? `${prefix}${randomBytes(4).toString('hex')}`;
      const config = { 'raw.lxc': `lxc.init.cmd=${opts.init ?? '/sbin/testinit'}`, ...opts.config };
      const member = opts.member ? ['--target', opts.member] : [];
      await cli(scoped(['init', TEST_IMAGE, name, ...member, ...Object.entries(config).flatMap(([key, value]) => ['-c', `${key}=${value}`])]));
      try {
        for (const [path, content] of Object.entries(opts.files ?? {}))
          await cli(scoped(['file', 'push', '--mode', '0755', '-', `${name}${path}`]), 30_000, content);
        if (opts.start !== false) {
          await cli(scoped(['start', name]));
          await waitForStatus(name, STATUS_RUNNING, 10_000);
        }
      } catch (err) {
        await remove(name).catch(() => undefined);
        throw err;
      }
      return name;
    },
    async crash(name) {
      const { pid, status: now } = await status(name);
      if (pid <= 0) throw new Error(`cannot crash ${name}: it has no init process (status ${now})`);
      process.kill(pid, 'SIGKILL');
    },
    async start(name) {
      await whileBusy(scoped(['start', name]), 5_000);
    },
    reachable() {
      reachable ??= (async () => {
        try {
          if (!statSync(spec.socket()).isSocket()) return false;
        } catch {
          return false;
        }
        // A daemon busy with other suites' containers can be slow: a socket that exists gets three tries
        // of 10 s before it is called unreachable (a false "unreachable" would skip, or fail, a suite).
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            return spec.isWanted(JSON.parse(await cli(['query', '/1.0'], 10_000)));
          } catch {
            if (attempt < 2) await sleep(1_000); // a pause between tries, not a wait for a condition
          }
        }
        return false;
      })();
      return reachable;
    },
    required: () => process.env[spec.requiredBy] === '1',
    monitor() {
      const child = spawn(spec.cliName, ['monitor', '--type=lifecycle', '--format=json'], {
        env: { ...process.env, ...spec.env() },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const events: LifecycleEvent[] = [];
      let buf = '';
      // With --format=json the CLI writes one event a line.
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
          const line = buf.slice(0, i).trim();
          if (!line) continue;
          const e = JSON.parse(line) as { timestamp: string; metadata: { action: string; source: string } };
          const instance = e.metadata.source === '/1.0' ? '' : /^\/1\.0\/instances\/([^/?]+)/.exec(e.metadata.source)?.[1];
          if (instance !== undefined) events.push({ at: Date.parse(e.timestamp), instance: decodeURIComponent(instance), action: e.metadata.action });
        }
      });
      const probe = 'user.reflex-test-monitor';
      return {
        events,
        async listening() {
          // Each try changes the server's config (a user key, which means nothing to the daemon) until one is heard.
          await until(
            `${spec.cliName} monitor to listen`,
            async () => {
              await cli(['config', 'set', probe, randomBytes(4).toString('hex')]);
              return until('the change heard', () => events.some((e) => e.instance === '' && e.action === 'config-updated'), 1_000).catch(
                () => false,
              );
            },
            15_000,
            0,
          );
          await cli(['config', 'unset', probe]);
        },
        heard: (instance, action, timeoutMs = 15_000) =>
          until(
            `${spec.cliName} monitor to hear ${action} of ${instance}`,
            () => events.find((e) => e.instance === instance && e.action === action),
            timeoutMs,
          ),
        stop: () => void child.kill(),
      };
    },
    inProject: (project) => daemonBed({ ...spec, name: `${spec.name} project ${project}`, project }),
  };
}

const LXD_SOCKETS = ['/var/lib/lxd/unix.socket', '/var/snap/lxd/common/lxd/unix.socket', '/var/lib/incus/unix.socket'];

/** The first existing LXD unix socket (Incus' as a last resort), or undefined when there is none. */
export function lxdSocketPath(): string | undefined {
  return LXD_SOCKETS.find((path) => {
    try {
      return statSync(path).isSocket();
    } catch {
      return false;
    }
  });
}

/** The LXD 5.0 daemon of scripts/lxd-testbed.sh. */
export const lxdBed = daemonBed({
  name: 'LXD',
  kind: 'lxd',
  cliName: 'lxc',
  socket: () => lxdSocketPath() ?? LXD_SOCKETS[0]!,
  env: (): Record<string, string> => {
    const socket = lxdSocketPath();
    return socket ? { LXD_SOCKET: socket } : {};
  },
  isWanted: () => true,
  requiredBy: 'REFLEX_REQUIRE_LXD',
  setup: 'run scripts/lxd-testbed.sh as root',
});

/** The socket of the Debian package's `incusd`. */
export const INCUS_SOCKET = '/var/lib/incus/unix.socket';

/** The Incus 6.0 daemon of scripts/incus-testbed.sh, beside LXD. */
export const incusBed = daemonBed({
  name: 'Incus',
  kind: 'incus',
  cliName: 'incus',
  socket: () => INCUS_SOCKET,
  env: () => ({ INCUS_SOCKET }),
  isWanted: (server) => server.environment?.server === 'incus',
  requiredBy: 'REFLEX_REQUIRE_INCUS',
  setup: 'run scripts/incus-testbed.sh as root',
});

/**
 * Creates a project on `bed`'s daemon for instances named like ones in `default`. On LXD 5.0.2 a
 * project made with features.images/profiles/storage.volumes off uses the default project's images,
 * profiles and volumes, so the test image and the root disk of the default profile work there unchanged.
 */
export async function createTestProject(bed: DaemonBed): Promise<string> {
  const project = `${TEST_INSTANCE_PREFIX}proj-${randomBytes(3).toString('hex')}`;
  await bed.cli([
    'project',
    'create',
    project,
    '-c',
    'features.images=false',
    '-c',
    'features.profiles=false',
    '-c',
    'features.storage.volumes=false',
  ]);
  return project;
}

/** Deletes the project (its instances must be gone); a project that does not exist is not an error. */
export async function deleteTestProject(bed: DaemonBed, project: string): Promise<void> {
  try {
    await bed.cli(['project', 'delete', project]);
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
  }
}

/** The daemons a test written once runs on: LXD and Incus. */
export const daemonBeds: readonly DaemonBed[] = [lxdBed, incusBed];

/** The lock file of each daemon: `reflex-real-lxd.lock` is also what earlier versions of this file took for every daemon. */
const lockPath = (lock: DaemonLock) => `/tmp/reflex-real-${lock}.lock`;
const LOCK_STALE_MS = 10 * 60_000;
const LOCK_POLL_MS = 200;
/** How long a suite waits for its daemon's lock: other files' suites on the daemon hold it meanwhile. */
const LOCK_WAIT_MS = 15 * 60_000;
const skipNoticePrinted = new Set<string>();

/**
 * Declares a suite that needs `bed`'s daemon. Await it at the top level of a test file. With a
 * daemon that answers, the suite runs holding the daemon's cross-process lock for its whole duration.
 * Without one it is skipped (one notice on stderr per bed), unless the run requires the daemon
 * ({@link DaemonBed.required}): then it fails, saying how to get one.
 */
export async function describeBed(bed: DaemonBed, name: string, body: () => void): Promise<void> {
  if (await bed.reachable()) {
    describe(name, () => {
      holdTheLock(bed.lock, name);
      body();
    });
    return;
  }
  skipOrFail(bed, name, body);
}

/**
 * A suite written once and run on each bed of `beds` (default: LXD and Incus), named `NAME, on BED`;
 * each bed as {@link describeBed}: run holding the lock, skipped without its daemon, or failing when
 * the run requires it.
 */
export async function describeEachBed(name: string, body: (bed: DaemonBed) => void, beds: readonly DaemonBed[] = daemonBeds): Promise<void> {
  const answering: DaemonBed[] = [];
  for (const bed of beds) {
    if (await bed.reachable()) answering.push(bed);
    else skipOrFail(bed, `${name}, on ${bed.name}`, () => body(bed));
  }
  if (answering.length === 0) return;
  describe.each(answering.map((bed) => [bed.name, bed] as const))(`${name}, on %s`, (_, bed) => {
    holdTheLock(bed.lock, `${name}, on ${bed.name}`);
    body(bed);
  });
}

/**
 * Holds `lock` for the enclosing describe. With REFLEX_TEST_LOCK_LOG=FILE (`npm test` sets it), each
 * hold appends a line to FILE: the lock, the suite, when the wait began, when the lock was taken and
 * when it was given back (ms since the epoch), from which scripts/test.mjs tells how long each daemon
 * was held and waited for.
 */
function holdTheLock(lock: DaemonLock, suite: string): void {
  let release: (() => Promise<void>) | undefined;
  let asked = 0;
  let taken = 0;
  beforeAll(async () => {
    asked = Date.now();
    release = await acquireDaemonLock(lock);
    taken = Date.now();
  }, LOCK_WAIT_MS);
  afterAll(async () => {
    await release?.();
    const log = process.env.REFLEX_TEST_LOCK_LOG;
    if (log && taken) await appendFile(log, `${JSON.stringify({ lock, suite, asked, taken, released: Date.now() })}\n`).catch(() => undefined);
  });
}

function skipOrFail(bed: DaemonBed, name: string, body: () => void): void {
  if (bed.required()) {
    describe(name, () => {
      it(`needs a real ${bed.name} daemon`, () => {
        throw new Error(`real ${bed.name} required but ${bed.missing}`);
      });
    });
    return;
  }
  if (!skipNoticePrinted.has(bed.name)) {
    skipNoticePrinted.add(bed.name);
    process.stderr.write(`real-${bed.name} suites skipped: ${bed.missing} to enable them\n`);
  }
  describe.skip(name, body);
}

/** `reflex run` on the bed's socket with the bundled rules, the HTTP server off (so that replicas can run side by side). */
export function startReflexOn(
  bed: DaemonBed,
  redisUrl: string,
  prefix: string,
  opts: { args?: string[]; env?: Record<string, string> } = {},
): ReflexProcess {
  return startReflexProcess(
    ['run', '--target', bed.target, '--redis', redisUrl, '--prefix', prefix, '--rules', 'rules', '--http-port', '0', ...(opts.args ?? [])],
    {
      REFLEX_LOG_LEVEL: 'info',
      ...opts.env,
    },
  );
}

/**
 * {@link startReflexOn} for a whole describe: watching the bed before its tests, stopped after them.
 * Its stop is an after-all hook: call it after the describe's own, which then run after the stop.
 */
export function reflexWatchingSuite(bed: DaemonBed, redisUrl: string, prefix: string): void {
  let reflex: ReflexProcess | undefined;
  beforeAll(async () => {
    reflex = startReflexOn(bed, redisUrl, prefix);
    await reflex.waitUntilWatching();
  });
  afterAll(async () => {
    await reflex?.stop();
  });
}

/**
 * Takes the lock that serialises real-daemon suites on one daemon across vitest workers and
 * concurrent test runs on this machine, waiting as long as it is held. Returns the function that releases it.
 *
 * The lock is a file created with O_EXCL holding the owner's pid and the start time of that
 * process. It is taken over when that process is gone (its pid free, a zombie, or reused by a
 * process that started at another time) or the file has not been refreshed for 10 minutes (the
 * owner refreshes it every minute), so a killed test run never blocks the next one for long.
 */
export async function acquireDaemonLock(lock: DaemonLock): Promise<() => Promise<void>> {
  const path = lockPath(lock);
  const token = `${process.pid} ${hostname()} ${randomBytes(6).toString('hex')} ${processStart(process.pid) ?? ''}`;
  for (;;) {
    try {
      const file = await open(path, 'wx');
      await file.writeFile(token);
      await file.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    await takeOverIfStale(path);
    await sleep(LOCK_POLL_MS); // the poll interval of this wait on the lock, which can last minutes
  }

  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, 60_000);
  heartbeat.unref();

  return async () => {
    clearInterval(heartbeat);
    // Only remove the lock if it is still ours (it may have been taken over as stale).
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === token) await unlink(path).catch(() => undefined);
  };
}

async function takeOverIfStale(path: string): Promise<void> {
  let content: string;
  let mtimeMs: number;
  try {
    content = await readFile(path, 'utf8');
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return; // Released meanwhile.
  }
  if (!lockIsStale(content, mtimeMs)) return;

  // Move the stale file aside rather than unlinking it: if another waiter replaced it in the
  // meantime, we have moved a live lock and must put it back.
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch {
    return;
  }
  const moved = await readFile(aside, 'utf8').catch(() => content);
  if (moved !== content) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

function lockIsStale(content: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return true;
  const [pidText, host, , start] = content.split(' ');
  const pid = Number(pidText);
  // Written but not yet filled in, or held from another machine sharing /tmp: trust the age only.
  if (!Number.isInteger(pid) || pid <= 0 || host !== hostname()) return false;
  const now = processStart(pid);
  return now === undefined || (start !== undefined && start !== '' && start !== now);
}

/**
 * When a process started (clock ticks since boot, field 22 of /proc/PID/stat), or undefined when
 * there is no such process or it is a zombie (orphaned vitest workers can linger as zombies where
 * PID 1 does not reap promptly, as on the CI container). With the pid, it names a process: pids
 * are reused (pid_max is often 32 768), so a pid written down by a killed run soon names a stranger.
 */
export function processStart(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' ? undefined : fields[19];
}
