import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { acquireLxdLock, STATUS_RUNNING, TEST_IMAGE, type InstanceStatus } from './lxd-bed.js';

/**
 * Helpers for the suite that drives the real two-member LXD cluster of
 * scripts/lxd-cluster-testbed.sh. Like lxd-bed.ts they go through `lxc`, here pointed at one
 * member's socket; the cluster is its own set of daemons, so it needs no lock shared with the
 * main daemon's suites.
 */

const run = promisify(execFile);

/** Where scripts/lxd-cluster-testbed.sh keeps member N (its LXD_DIR). */
export function memberDir(member: string): string {
  return `/var/lib/lxd-cluster/${member}`;
}

export function memberSocket(member: string): string {
  return `${memberDir(member)}/unix.socket`;
}

/** The bed's members, in order; the tests connect to the first. */
export const MEMBERS = ['m1', 'm2'] as const;
/** Names of instances the cluster tests create start with this; the bed script deletes leftovers. */
export const CLUSTER_INSTANCE_PREFIX = 'rc-';

/** `lxc` against one member's unix socket; errors carry lxc's stderr. */
export async function memberLxc(member: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const pending = run('lxc', args, { timeout: timeoutMs, env: { ...process.env, LXD_DIR: memberDir(member), LXD_SOCKET: memberSocket(member) } });
    pending.child.stdin?.end();
    return (await pending).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    const detail = e.killed ? `timed out after ${timeoutMs} ms` : (e.stderr?.trim() || e.message);
    throw new Error(`lxc (${member}) ${args.join(' ')}: ${detail}`, { cause: err });
  }
}

async function clusterReachable(): Promise<boolean> {
  try {
    if (!statSync(memberSocket('m1')).isSocket()) return false;
    const server = JSON.parse(await memberLxc('m1', ['query', '/1.0'], 10_000)) as { environment?: { server_clustered?: boolean } };
    return server.environment?.server_clustered === true;
  } catch {
    return false;
  }
}

/**
 * Declares a suite that needs the cluster bed, holding the cross-process LXD lock (lxd-bed.ts)
 * for its whole duration. Without it the suite is skipped with a notice,
 * unless REFLEX_REQUIRE_LXD_CLUSTER=1, which turns the absence into a failing test.
 */
export async function describeLxdCluster(name: string, body: () => void): Promise<void> {
  if (await clusterReachable()) {
    // The cluster suites kill, evacuate and restore members: one suite at a time, and none beside
    // a suite on the main daemon (the same host, the same CPUs), so each holds the LXD lock.
    describe(name, () => {
      let release: (() => Promise<void>) | undefined;
      beforeAll(async () => {
        release = await acquireLxdLock();
      }, 15 * 60_000);
      afterAll(async () => {
        await release?.();
      });
      body();
    });
    return;
  }
  const why = `no clustered LXD answers on ${memberSocket('m1')}; run scripts/lxd-cluster-testbed.sh start as root (after scripts/lxd-testbed.sh)`;
  if (process.env.REFLEX_REQUIRE_LXD_CLUSTER === '1') {
    describe(name, () => {
      it('needs the real LXD cluster bed', () => {
        throw new Error(`real LXD cluster required (REFLEX_REQUIRE_LXD_CLUSTER=1) but ${why}`);
      });
    });
    return;
  }
  process.stderr.write(`real-LXD-cluster suite skipped: ${why}\n`);
  describe.skip(name, body);
}

/** Creates an instance of the test image on `member` (through member 1), starts it, waits for Running. */
export async function launchOnMember(member: string, config: Record<string, string> = {}): Promise<string> {
  const name = `${CLUSTER_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
  const all = { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit', ...config };
  await memberLxc('m1', ['init', TEST_IMAGE, name, '--target', member, ...Object.entries(all).flatMap(([k, v]) => ['-c', `${k}=${v}`])]);
  try {
    await memberLxc('m1', ['start', name]);
    await waitForClusterStatus(name, STATUS_RUNNING, 10_000);
  } catch (err) {
    await deleteClusterInstance(name).catch(() => undefined);
    throw err;
  }
  return name;
}

/** `GET /1.0/instances/NAME` and its state, through member 1 (which forwards to the instance's member). */
export async function clusterInstanceStatus(name: string): Promise<InstanceStatus & { location: string }> {
  const [instance, state] = await Promise.all([
    memberLxc('m1', ['query', `/1.0/instances/${name}`], 10_000),
    memberLxc('m1', ['query', `/1.0/instances/${name}/state`], 10_000),
  ]);
  const s = JSON.parse(state) as InstanceStatus;
  return { status: s.status, status_code: s.status_code, pid: s.pid, location: (JSON.parse(instance) as { location: string }).location };
}

/** SIGKILL of the instance's init from the host: every member's containers are this host's processes. */
export async function crashClusterInstance(name: string): Promise<void> {
  const { pid, status } = await clusterInstanceStatus(name);
  if (pid <= 0) throw new Error(`cannot crash ${name}: it has no init process (status ${status})`);
  process.kill(pid, 'SIGKILL');
}

/** Polls every 50 ms until the status code is `code`; throws naming the last status seen. */
export async function waitForClusterStatus(name: string, code: number, timeoutMs: number): Promise<void> {
  const start = Date.now();
  let last = 'none yet';
  for (;;) {
    try {
      const s = await clusterInstanceStatus(name);
      if (s.status_code === code) return;
      last = `${s.status} (${s.status_code})`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() - start >= timeoutMs) throw new Error(`${name} did not reach status ${code} within ${timeoutMs} ms; last seen: ${last}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Force-deletes the instance, waiting out a busy stop hook; a missing one is not an error. */
export async function deleteClusterInstance(name: string): Promise<void> {
  // A member restarted a moment ago: member 1 answers "Missing event connection" until its event
  // connection to it is back (seconds to tens of seconds).
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      await memberLxc('m1', ['delete', '-f', name]);
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (/not found/i.test(message)) return;
      if (!/busy running|Missing event connection/i.test(message) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** `lxc move NAME --target MEMBER` (through member 1); a cluster moves a stopped instance only. */
export async function moveToMember(name: string, member: string): Promise<void> {
  await memberLxc('m1', ['move', name, '--target', member], 60_000);
}

/** PID of a member's daemon, from the bed's pid file; undefined when it is not running. */
export function memberPid(member: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(`/var/lib/lxd-cluster/${member}.pid`, 'utf8').trim());
  } catch {
    return undefined;
  }
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** SIGKILL of a member's daemon (its containers keep running, as after a daemon crash); waits until it is gone. */
export async function killMember(member: string): Promise<void> {
  const pid = memberPid(member);
  if (pid === undefined) throw new Error(`member ${member} is not running`);
  process.kill(pid, 'SIGKILL');
  while (memberPid(member) !== undefined) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Brings a killed member back (`scripts/lxd-cluster-testbed.sh start-member`, which deletes no
 * instance, unlike `start`) and waits until the cluster reads every member Online.
 */
export async function restoreMembers(timeoutMs = 60_000): Promise<void> {
  for (const m of MEMBERS) {
    if (memberPid(m) !== undefined) continue;
    await run('bash', ['scripts/lxd-cluster-testbed.sh', 'start-member', m], { timeout: timeoutMs });
  }
  for (const m of MEMBERS) await waitForMember(m, 'Online', timeoutMs);
  await waitForEventConnections(timeoutMs);
}

/**
 * Waits until member 1 reaches every instance again. After a member restarts, the cluster reads it
 * Online before member 1's event connection to it is back, and until then member 1 answers requests
 * about that member's instances with "Missing event connection with target cluster member".
 */
async function waitForEventConnections(timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const listed = JSON.parse(await memberLxc('m1', ['query', '/1.0/instances?recursion=1'])) as { name: string; devices: unknown }[];
      const stub = listed.find((i) => i.devices === null);
      if (stub) throw new Error(`${stub.name} is still listed as a stub`);
      for (const i of listed) await memberLxc('m1', ['query', `/1.0/instances/${i.name}`]);
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > until) throw new Error(`member 1 does not reach every instance after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The cluster's view of a member's status (`Online`, `Offline`, …), asked of any member that answers. */
export async function memberStatus(member: string): Promise<string> {
  let last: unknown;
  for (const via of MEMBERS) {
    if (memberPid(via) === undefined) continue;
    try {
      return (JSON.parse(await memberLxc(via, ['query', `/1.0/cluster/members/${member}`], 10_000)) as { status: string }).status;
    } catch (err) {
      last = err;
    }
  }
  throw new Error(`no member answers for ${member}'s status`, { cause: last });
}

/** Polls every 250 ms until the cluster reads `member` with `status`; returns when it did (ms epoch). */
export async function waitForMember(member: string, status: string, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  let last = 'none yet';
  for (;;) {
    try {
      last = await memberStatus(member);
      if (last === status) return Date.now();
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > until) throw new Error(`member ${member} not ${status} within ${timeoutMs} ms; last seen: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
