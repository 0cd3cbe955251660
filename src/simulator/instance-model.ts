import { createHash } from 'node:crypto';
import { StatusCode, statusText, type ApiRevision } from '../client/status-code.js';
import type { LockHolder } from './busy-policy.js';
import { linkLocalAddress } from './guest/guest-address.js';
import { zeroTime } from './time.js';

/** Instance types. */
export type InstanceType = 'container' | 'virtual-machine';

/** A device map as LXD has it: device name → string fields. */
export type Devices = Record<string, Record<string, string>>;

/** A snapshot of an instance. */
export interface SimSnapshot {
  name: string;
  createdAt: string;
  expiresAt: string;
  stateful: boolean;
  config: Record<string, string>;
  devices: Devices;
  profiles: string[];
}

/** An action that holds the instance's operation lock (LXD `operationlock`). */
export type LockAction = 'start' | 'stop' | 'restart' | 'freeze' | 'unfreeze' | 'update' | 'delete' | 'rename' | 'snapshot' | 'restore';

/** The key of an instance in the simulator's per-instance books (faults, call counts). */
export function instanceKey(project: string, name: string): string {
  return `${project}/${name}`;
}

/** Told of an instance's changes (the guest network listens on an instance's address while it runs). */
export interface InstanceObserver {
  /** After every change (`touch()`). */
  changed(inst: SimInstance): void;
  /** Its address was shown in its state: someone may connect to it. */
  addressShown(inst: SimInstance): void;
  /** It was deleted. */
  removed(inst: SimInstance): void;
}

/**
 * One simulated instance. Handlers mutate it through the action driver; `touch()` must follow every
 * change so cached renderings are rebuilt.
 */
export class SimInstance {
  description = '';
  architecture = 'x86_64';
  config: Record<string, string>;
  devices: Devices = {};
  profiles: string[] = ['default'];
  ephemeral = false;
  stateful = false;
  lastUsedAt: string = zeroTime;
  /** When the guest last started (Incus's `started_at` in /state); the creation time for a seeded running instance. */
  startedAt: string = zeroTime;
  statusCode: StatusCode = StatusCode.Stopped;
  pid = 0;
  /**
   * The node name a command in the guest set (`hostname NAME`: root's own UTS namespace), with the
   * run it was set in (its pid and start): it lasts until the instance stops ({@link nodeName}).
   */
  private setNodeName: { run: string; name: string } | undefined;
  /** Cluster member holding the instance; "none" on a standalone server. */
  location = 'none';
  /** Its member is Offline: listed with status Error 112, as LXD shows instances it cannot reach. */
  memberOffline = false;
  readonly snapshots = new Map<string, SimSnapshot>();
  /**
   * The global IPv4 address of its first NIC while it runs (set by the store): a loopback address
   * of its own, so a client on this host reaches the guest's endpoint (guest/guest-network.ts).
   */
  guestAddress: string | undefined;
  /** Told of changes (set by the store). */
  observer: InstanceObserver | undefined;
  /** The API state change holding the lock, when one does (a crash's stop hook or an update holds it without). */
  lockHolder: LockHolder | undefined;
  private held: LockAction | undefined;
  private unlockWaiters: (() => void)[] = [];
  /** Config and devices of a list of profiles (set by the store; none when absent). */
  expandProfiles: (names: readonly string[]) => { config: Record<string, string>; devices: Devices } = () => ({ config: {}, devices: {} });
  private cache = new Map<string, string>();

  /** What the guest's `hostname` and `uname -n` print: the instance's name, unless a command of this run set another. */
  get nodeName(): string {
    return this.setNodeName?.run === this.run() ? this.setNodeName.name : this.name;
  }

  set nodeName(name: string) {
    this.setNodeName = { run: this.run(), name };
  }

  private run(): string {
    return `${this.pid}@${this.startedAt}`;
  }

  constructor(
    public name: string,
    readonly project: string,
    readonly type: InstanceType,
    readonly createdAt: string,
    config: Record<string, string>,
  ) {
    this.config = config;
  }

  /** The action currently holding the operation lock, if any. */
  get lock(): LockAction | undefined {
    return this.held;
  }

  /** Taking or releasing the lock; a release wakes, on the next turn, whoever waits for it. */
  set lock(action: LockAction | undefined) {
    this.held = action;
    if (action !== undefined) return;
    this.lockHolder = undefined;
    const waiters = this.unlockWaiters.splice(0);
    if (waiters.length > 0) setImmediate(() => waiters.forEach((w) => w()));
  }

  /** Calls `fn` once the lock is next released. */
  whenUnlocked(fn: () => void): void {
    this.unlockWaiters.push(fn);
  }

  /** Invalidates cached renderings after any change. */
  touch(): void {
    this.cache.clear();
    this.observer?.changed(this);
  }

  /** True when the instance has a running guest (Running, Frozen, Freezing, Thawed, Ready, Error). */
  get isActive(): boolean {
    return this.statusCode !== StatusCode.Stopped && this.statusCode !== StatusCode.Starting;
  }

  /** URL path under /1.0/instances (with ?project= outside default). */
  url(prefix = 'instances'): string {
    return `/1.0/${prefix}/${this.name}${this.project === 'default' ? '' : `?project=${this.project}`}`;
  }

  /** Quoted SHA-256 over what LXD hashes: architecture, local config (incl. volatile.*), devices, ephemeral, profiles. */
  etag(): string {
    let tag = this.cache.get('etag');
    if (!tag) {
      const h = createHash('sha256').update(
        JSON.stringify([this.architecture, sorted(this.config), sorted(this.devices), this.ephemeral, this.profiles]),
      );
      tag = `"${h.digest('hex')}"`;
      this.cache.set('etag', tag);
    }
    return tag;
  }

  /** The instance object (recursion 1) as JSON text, cached until the next touch(). */
  json(revision: ApiRevision): string {
    const key = `json:${revision}`;
    let text = this.cache.get(key);
    if (!text) {
      text = JSON.stringify(this.render(revision));
      this.cache.set(key, text);
    }
    return text;
  }

  /** The instance object in LXD 5.0.2's field order. */
  render(revision: ApiRevision): Record<string, unknown> {
    if (this.memberOffline) return this.renderUnreachable(revision);
    const expanded = this.expandProfiles(this.profiles);
    const statusCode = this.statusCode;
    return {
      architecture: this.architecture,
      config: this.config,
      devices: this.devices,
      ephemeral: this.ephemeral,
      profiles: this.profiles,
      stateful: this.stateful,
      description: this.description,
      created_at: this.createdAt,
      expanded_config: { ...expanded.config, ...this.config },
      expanded_devices: { ...expanded.devices, ...this.devices },
      name: this.name,
      status: statusText(statusCode, revision),
      status_code: statusCode,
      // Incus stamps an instance's last use at its creation; LXD 5.0.2 leaves it zero until a start.
      last_used_at: revision === 'later' && this.lastUsedAt === zeroTime ? this.createdAt : this.lastUsedAt,
      location: this.location,
      type: this.type,
      project: this.project,
    };
  }

  /**
   * What LXD 5.0.2 lists for an instance whose cluster member does not answer: a stub in Error
   * (112) with its name, member and project, null maps, an empty type and no expanded config or
   * devices (as the real two-member bed answers, field for field).
   */
  private renderUnreachable(revision: ApiRevision): Record<string, unknown> {
    return {
      architecture: '',
      config: null,
      devices: null,
      ephemeral: false,
      profiles: null,
      stateful: false,
      description: '',
      created_at: '0001-01-01T00:00:00Z',
      name: this.name,
      status: statusText(StatusCode.Error, revision),
      status_code: StatusCode.Error,
      last_used_at: '0001-01-01T00:00:00Z',
      location: this.location,
      type: '',
      project: this.project,
    };
  }

  /** GET …/state: status, pid (0 when stopped), processes, cpu, memory, network, disk. */
  renderState(revision: ApiRevision): Record<string, unknown> {
    const up = this.isActive;
    const state: Record<string, unknown> = {
      status: statusText(this.statusCode, revision),
      status_code: this.statusCode,
      // A `dir` pool has no quota, so no disk usage; no memory limit, so no total (observed on 5.0.2).
      disk: {},
      memory: up
        ? { usage: 2_400_256, usage_peak: 3_100_672, swap_usage: 0, swap_usage_peak: 0 }
        : { usage: 0, usage_peak: 0, swap_usage: 0, swap_usage_peak: 0 },
      network: up ? this.renderNetwork() : null,
      pid: up ? this.pid : 0,
      processes: up ? 2 : 0,
      cpu: { usage: up ? 41_000_000 : 0 },
    };
    if (revision === 'later') {
      // Incus (instances_state_total, instance_state_started_at, instances_state_os_info): a memory
      // total, the CPU time allotted, the start time, and no OS info for a container without an agent.
      (state.memory as Record<string, number>).total = up ? 24_683_620_000 : 0;
      state.cpu = { usage: up ? 41_000_000 : 0, allocated_time: up ? 2_000_000_000 : 0 };
      state.started_at = up ? (this.startedAt === zeroTime ? this.createdAt : this.startedAt) : zeroTime;
      state.os_info = null;
    }
    return state;
  }

  /**
   * One entry per NIC of the expanded devices (up, with the MAC LXD assigned, an IPv6 link-local
   * address from it, and on the first NIC the instance's IPv4 address, as a NIC on a managed bridge
   * shows its DHCP lease) plus `lo`: up with 127.0.0.1 and ::1 in a guest with an init system, down
   * without addresses in the test bed's busybox guest (no init system brings it up).
   */
  private renderNetwork(): Record<string, unknown> {
    const devices = { ...this.expandProfiles(this.profiles).devices, ...this.devices };
    const net: Record<string, Record<string, unknown>> = {};
    for (const [dev, d] of Object.entries(devices)) {
      if (d.type !== 'nic') continue;
      const hwaddr = this.config[`volatile.${dev}.hwaddr`] ?? '00:16:3e:00:00:00';
      net[d.name ?? dev] = nic(hwaddr, 'broadcast', dev, [address('inet6', linkLocalAddress(hwaddr), '64', 'link')]);
    }
    const names = Object.keys(net).sort();
    if (names.length > 0 && this.guestAddress) {
      (net[names[0]!]!.addresses as unknown[]).unshift(address('inet', this.guestAddress, '8', 'global'));
      this.observer?.addressShown(this);
    }
    const busybox = (this.config['image.os'] ?? 'busybox').toLowerCase() === 'busybox';
    net.lo = busybox
      ? { ...nic('', 'loopback', 'lo', []), state: 'down' }
      : nic('', 'loopback', 'lo', [address('inet', '127.0.0.1', '8', 'local'), address('inet6', '::1', '128', 'local')]);
    return Object.fromEntries(Object.entries(net).sort(([a], [b]) => a.localeCompare(b)));
  }

  /** A snapshot object. */
  renderSnapshot(s: SimSnapshot): Record<string, unknown> {
    const expanded = this.expandProfiles(s.profiles);
    return {
      architecture: this.architecture,
      config: s.config,
      devices: s.devices,
      ephemeral: false,
      profiles: s.profiles,
      created_at: s.createdAt,
      expanded_config: { ...expanded.config, ...s.config },
      expanded_devices: { ...expanded.devices, ...s.devices },
      last_used_at: zeroTime,
      name: s.name,
      stateful: s.stateful,
      size: -1,
      expires_at: s.expiresAt,
    };
  }
}

/** An entry of a NIC's `addresses`, in LXD's field order. */
function address(family: 'inet' | 'inet6', addr: string, netmask: string, scope: 'global' | 'link' | 'local'): Record<string, string> {
  return { family, address: addr, netmask, scope };
}

function nic(hwaddr: string, type: string, hostName: string, addresses: Record<string, string>[]): Record<string, unknown> {
  return {
    addresses,
    counters: {
      bytes_received: 0,
      bytes_sent: 0,
      packets_received: 0,
      packets_sent: 0,
      errors_received: 0,
      errors_sent: 0,
      packets_dropped_outbound: 0,
      packets_dropped_inbound: 0,
    },
    hwaddr,
    host_name: hostName === 'lo' ? '' : `veth${hwaddr.replace(/:/g, '').slice(-8)}`,
    mtu: hostName === 'lo' ? 65536 : 1500,
    state: 'up',
    type,
  };
}

function sorted(obj: Record<string, unknown>): [string, unknown][] {
  return Object.keys(obj)
    .sort()
    .map((k) => [k, obj[k]]);
}
