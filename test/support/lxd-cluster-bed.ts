import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { daemonBed, processStart, type DaemonBed, type InstanceStatus } from './daemon-bed.js';
import { until } from './wait.js';

/**
 * The two-member LXD cluster of scripts/lxd-cluster-testbed.sh as beds (test/support/daemon-bed.ts):
 * one per member, through `lxc` pointed at that member's socket. The tests drive the cluster
 * through member 1 ({@link clusterBed}); the other members' beds are for asking them directly.
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

function memberBed(member: string): DaemonBed {
  return daemonBed({
    name: `LXD cluster member ${member}`,
    kind: 'lxd',
    cliName: 'lxc',
    socket: () => memberSocket(member),
    env: () => ({ LXD_DIR: memberDir(member), LXD_SOCKET: memberSocket(member) }),
    isWanted: (server) => server.environment?.server_clustered === true,
    requiredBy: 'REFLEX_REQUIRE_LXD_CLUSTER',
    setup: 'run scripts/lxd-cluster-testbed.sh start as root (after scripts/lxd-testbed.sh)',
    // Names of instances the cluster tests create start with this; the bed script deletes leftovers.
    prefix: 'rc-',
    // A member restarted a moment ago: member 1 answers "Missing event connection" until its event
    // connection to it is back (seconds to tens of seconds).
    busy: /busy running|Missing event connection/i,
    removeWithinMs: 60_000,
    lock: 'lxd-cluster',
  });
}

const memberBeds = new Map(MEMBERS.map((m) => [m as string, memberBed(m)]));

/** The cluster, reached through member 1 (which forwards to the instance's member). */
export const clusterBed = memberBeds.get('m1')!;

/** `lxc` against one member's unix socket; errors carry lxc's stderr. */
export function memberLxc(member: string, args: string[], timeoutMs?: number): Promise<string> {
  const bed = memberBeds.get(member);
  if (!bed) throw new Error(`no cluster member ${member}`);
  return bed.cli(args, timeoutMs);
}

/** `GET /1.0/instances/NAME` and its state, through member 1 (which forwards to the instance's member). */
export async function clusterInstanceStatus(name: string): Promise<InstanceStatus & { location: string }> {
  const [instance, state] = await Promise.all([clusterBed.cli(['query', `/1.0/instances/${name}`], 10_000), clusterBed.status(name)]);
  return { ...state, location: (JSON.parse(instance) as { location: string }).location };
}

/** `lxc move NAME --target MEMBER` (through member 1); a cluster moves a stopped instance only. */
export async function moveToMember(name: string, member: string): Promise<void> {
  await clusterBed.cli(['move', name, '--target', member], 60_000);
}

/**
 * PID of a member's daemon, from the bed's pid file; undefined when it is not running. The pid
 * must still name the member (argv[0] lxd-cluster-mN, scripts/lxd-cluster-testbed.sh): a pid file
 * left by a killed bed can name a stranger, which must neither count as the member nor be killed.
 */
export function memberPid(member: string): number | undefined {
  let pid: number;
  let argv0: string;
  try {
    pid = Number(readFileSync(`/var/lib/lxd-cluster/${member}.pid`, 'utf8').trim());
    argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
  } catch {
    return undefined;
  }
  return argv0 === `lxd-cluster-${member}` && processStart(pid) !== undefined ? pid : undefined;
}

/** SIGKILL of a member's daemon (its containers keep running, as after a daemon crash); waits until it is gone. */
export async function killMember(member: string): Promise<void> {
  const pid = memberPid(member);
  if (pid === undefined) throw new Error(`member ${member} is not running`);
  process.kill(pid, 'SIGKILL');
  await until(`member ${member}'s daemon gone`, () => memberPid(member) === undefined, 10_000, 20);
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
  await until(
    'member 1 to reach every instance',
    async () => {
      const listed = JSON.parse(await clusterBed.cli(['query', '/1.0/instances?recursion=1'])) as { name: string; devices: unknown }[];
      const stub = listed.find((i) => i.devices === null);
      if (stub) throw new Error(`${stub.name} is still listed as a stub`);
      for (const i of listed) await clusterBed.cli(['query', `/1.0/instances/${i.name}`]);
      return true;
    },
    timeoutMs,
    500,
  );
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
  return until(
    `member ${member} ${status}`,
    async () => {
      const now = await memberStatus(member);
      if (now === status) return Date.now();
      throw new Error(`last seen ${now}`);
    },
    timeoutMs,
    250,
  );
}
