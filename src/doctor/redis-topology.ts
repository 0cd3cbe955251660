import type { DoctorCheck } from './doctor-check.js';

/**
 * What `reflex doctor` reads from a Redis Cluster or a Sentinel, and how it judges it: pure
 * functions over the servers' replies, so each decision is tested without a cluster.
 */

/** Number of hash slots of a Redis Cluster: all must be served for every key to be reachable. */
const CLUSTER_SLOTS = 16384;

/** The fields of `CLUSTER INFO` the doctor looks at. */
export interface ClusterInfo {
  state: string | undefined;
  slotsAssigned: number;
  slotsOk: number;
  slotsFail: number;
}

/** One line of `CLUSTER NODES`. */
export interface ClusterNode {
  id: string;
  /** `host:port` clients use. */
  address: string;
  role: 'master' | 'replica';
  /** Marked failed (`fail`) or suspected (`fail?`) by the cluster. */
  failing: boolean;
  /** For a replica, the id of its master. */
  masterId?: string;
  /** Whether it serves slots (a master without slots holds no data). */
  hasSlots: boolean;
}

/** Reads `CLUSTER INFO` (`name:value` lines). */
export function parseClusterInfo(text: string): ClusterInfo {
  const field = (name: string) => new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(text)?.[1];
  const num = (name: string) => Number(field(name) ?? 0);
  return {
    state: field('cluster_state'),
    slotsAssigned: num('cluster_slots_assigned'),
    slotsOk: num('cluster_slots_ok'),
    slotsFail: num('cluster_slots_fail') + num('cluster_slots_pfail'),
  };
}

/** Reads `CLUSTER NODES`: `id host:port@cport[,hostname] flags master-id ping pong epoch link slot…`. */
export function parseClusterNodes(text: string): ClusterNode[] {
  const nodes: ClusterNode[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const flags = f[2]!.split(',');
    if (flags.includes('noaddr') || flags.includes('handshake')) continue;
    const role = flags.includes('master') ? 'master' : 'replica';
    nodes.push({
      id: f[0]!,
      address: f[1]!.split('@')[0]!,
      role,
      failing: flags.includes('fail') || flags.includes('fail?'),
      ...(role === 'replica' && f[3] !== '-' ? { masterId: f[3] } : {}),
      hasSlots: f.length > 8,
    });
  }
  return nodes;
}

/** Whether a Redis Cluster serves every slot, with how many masters and replicas it has. */
export function judgeCluster(info: ClusterInfo, nodes: ClusterNode[]): DoctorCheck[] {
  const masters = nodes.filter((n) => n.role === 'master' && n.hasSlots);
  const replicas = nodes.filter((n) => n.role === 'replica');
  const failing = nodes.filter((n) => n.failing);
  const shape = `Redis Cluster: ${masters.length} master(s), ${replicas.length} replica(s)`;
  const checks: DoctorCheck[] = [];
  if (info.state !== 'ok' || info.slotsOk < CLUSTER_SLOTS) {
    const missing = CLUSTER_SLOTS - info.slotsAssigned;
    const why = [
      `cluster_state ${info.state ?? 'unknown'}`,
      missing > 0 ? `${missing} of ${CLUSTER_SLOTS} slots unassigned` : '',
      info.slotsFail > 0 ? `${info.slotsFail} slots on failing masters` : '',
      failing.length ? `failing: ${failing.map((n) => n.address).join(', ')}` : '',
    ].filter(Boolean);
    checks.push({
      name: 'redis',
      ok: false,
      detail: `${shape}; ${why.join(', ')}: keys in the missing slots cannot be read or written`,
      fix: 'assign every slot (redis-cli --cluster fix <host:port>) and bring failed masters back or let their replicas take over (redis-cli --cluster check <host:port>)',
    });
  } else {
    checks.push({ name: 'redis', ok: true, detail: `${shape}, cluster_state ok, all ${CLUSTER_SLOTS} slots covered` });
  }
  const orphans = masters.filter((m) => !replicas.some((r) => r.masterId === m.id && !r.failing));
  if (orphans.length) {
    checks.push({
      name: 'redis',
      ok: true,
      warning: true,
      detail: `master(s) without a working replica: ${orphans.map((m) => m.address).join(', ')}; if one dies, its slots (and Reflex's keys in them) are unavailable until it is back`,
    });
  }
  return checks;
}

/** The fields of `SENTINEL MASTER <name>` the doctor looks at. */
export interface SentinelMaster {
  address: string;
  flags: string[];
  replicas: number;
  /** Sentinels watching the master, counting the one that answered. */
  sentinels: number;
  quorum: number;
}

/** Reads the flat field/value list `SENTINEL MASTER <name>` answers. */
export function parseSentinelMaster(reply: readonly string[]): SentinelMaster {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) f.set(reply[i]!, reply[i + 1]!);
  return {
    address: `${f.get('ip') ?? '?'}:${f.get('port') ?? '?'}`,
    flags: (f.get('flags') ?? '').split(',').filter(Boolean),
    replicas: Number(f.get('num-slaves') ?? 0),
    sentinels: Number(f.get('num-other-sentinels') ?? 0) + 1,
    quorum: Number(f.get('quorum') ?? 0),
  };
}

/** Whether Sentinel sees its master up and can fail it over (enough sentinels for the quorum, a replica). */
export function judgeSentinel(name: string, m: SentinelMaster): DoctorCheck[] {
  const shape = `Redis Sentinel: master ${name} at ${m.address}, ${m.replicas} replica(s), ${m.sentinels} sentinel(s), quorum ${m.quorum}`;
  const down = m.flags.filter((f) => f === 's_down' || f === 'o_down');
  if (down.length) {
    return [
      {
        name: 'redis',
        ok: false,
        detail: `${shape}; the master is ${down.join(', ')} (sentinels see it down)`,
        fix: 'bring the master back, or check why Sentinel did not promote a replica (redis-cli -p 26379 SENTINEL CKQUORUM <name>)',
      },
    ];
  }
  if (m.sentinels < m.quorum) {
    return [
      {
        name: 'redis',
        ok: false,
        detail: `${shape}; fewer sentinels than the quorum: no failover can be authorised`,
        fix: 'run at least quorum (and better three) sentinels on separate machines',
      },
    ];
  }
  const checks: DoctorCheck[] = [{ name: 'redis', ok: true, detail: shape }];
  if (m.replicas === 0)
    checks.push({ name: 'redis', ok: true, warning: true, detail: `master ${name} has no replica: Sentinel has nothing to promote if it dies` });
  return checks;
}
