import type { ApiRevision } from '../client/status-code.js';
import type { InstanceType } from './instance-model.js';

type Check = (value: string) => string | undefined;

const optional =
  (check: Check): Check =>
  (v) =>
    v === '' ? undefined : check(v);
const any: Check = () => undefined;
const bool: Check = optional((v) => (/^(true|false|yes|no|on|off|1|0)$/i.test(v) ? undefined : `Invalid value for a boolean "${v}"`));
const int64: Check = optional((v) => (/^-?\d+$/.test(v) ? undefined : `Invalid value for an integer "${v}"`));
const uint32: Check = optional((v) => (/^\d+$/.test(v) && Number(v) <= 0xffffffff ? undefined : `Invalid value for uint32 "${v}"`));
const priority: Check = optional((v) => {
  if (!/^-?\d+$/.test(v)) return `Invalid value for an integer "${v}"`;
  return Number(v) < 0 || Number(v) > 10 ? `Invalid value for a limit "${v}". Must be between 0 and 10` : undefined;
});
const uuid: Check = optional((v) => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v) ? undefined : 'Invalid UUID'));
const oneOf =
  (...valid: string[]): Check =>
  (v) =>
    v === '' || valid.includes(v) ? undefined : `Invalid value "${v}" (not one of [${valid.join(' ')}])`;

/** `limits.memory`: a byte size (`64MiB`, `1GB`, `512`) or a percentage, not zero. */
const memory: Check = (v) => {
  if (v === '') return undefined;
  if (v.endsWith('%')) {
    const pct = v.slice(0, -1);
    if (!/^-?\d+$/.test(pct)) return `strconv.ParseInt: parsing "${pct}": invalid syntax`;
    return Number(pct) === 0 ? "Memory limit can't be 0%" : undefined;
  }
  const m = /^(\d+(?:\.\d+)?)\s*(B|[kMGTPE]i?B|)$/.exec(v);
  if (!m) return `Invalid value: ${v}`;
  return Number(m[1]) === 0 ? "Memory limit can't be 0" : undefined;
};

/** LXD 5.0.2's instance config keys (shared/instance.go) and their checks; `any` for free text. */
const anyType: Record<string, Check> = {
  'boot.autostart': bool,
  'boot.autostart.delay': int64,
  'boot.autostart.priority': int64,
  'boot.stop.priority': int64,
  'boot.host_shutdown_timeout': int64,
  'cloud-init.network-config': any,
  'cloud-init.user-data': any,
  'cloud-init.vendor-data': any,
  'cluster.evacuate': oneOf('auto', 'migrate', 'live-migrate', 'stop'),
  'limits.cpu': any,
  'limits.disk.priority': priority,
  'limits.memory': memory,
  'limits.network.priority': priority,
  'raw.apparmor': any,
  'security.devlxd': bool,
  'security.protection.delete': bool,
  'snapshots.schedule': any,
  'snapshots.schedule.stopped': bool,
  'snapshots.pattern': any,
  'snapshots.expiry': any,
  'volatile.apply_template': any,
  'volatile.base_image': any,
  'volatile.cloud-init.instance-id': uuid,
  'volatile.evacuate.origin': any,
  'volatile.last_state.idmap': any,
  'volatile.last_state.power': any,
  'volatile.idmap.base': any,
  'volatile.idmap.current': any,
  'volatile.idmap.next': any,
  'volatile.apply_quota': any,
  'volatile.uuid': uuid,
  'volatile.vsock_id': int64,
  'raw.idmap': any,
};
const containerOnly: Record<string, Check> = {
  'limits.cpu.allowance': any,
  'limits.cpu.priority': priority,
  'limits.hugepages.64KB': any,
  'limits.hugepages.1MB': any,
  'limits.hugepages.2MB': any,
  'limits.hugepages.1GB': any,
  'limits.memory.enforce': oneOf('soft', 'hard'),
  'limits.memory.swap': bool,
  'limits.memory.swap.priority': priority,
  'limits.processes': int64,
  'linux.kernel_modules': any,
  'migration.incremental.memory': bool,
  'migration.incremental.memory.iterations': uint32,
  'migration.incremental.memory.goal': uint32,
  'nvidia.runtime': bool,
  'nvidia.driver.capabilities': any,
  'nvidia.require.cuda': any,
  'nvidia.require.driver': any,
  'raw.lxc': any,
  'raw.seccomp': any,
  'security.devlxd.images': bool,
  'security.idmap.base': uint32,
  'security.idmap.isolated': bool,
  'security.idmap.size': uint32,
  'security.nesting': bool,
  'security.privileged': bool,
  'security.protection.shift': bool,
  'security.syscalls.allow': any,
  'security.syscalls.blacklist_default': bool,
  'security.syscalls.blacklist_compat': bool,
  'security.syscalls.blacklist': any,
  'security.syscalls.deny_default': bool,
  'security.syscalls.deny_compat': bool,
  'security.syscalls.deny': any,
  'security.syscalls.intercept.bpf': bool,
  'security.syscalls.intercept.bpf.devices': bool,
  'security.syscalls.intercept.mknod': bool,
  'security.syscalls.intercept.mount': bool,
  'security.syscalls.intercept.mount.allowed': any,
  'security.syscalls.intercept.mount.fuse': any,
  'security.syscalls.intercept.mount.shift': bool,
  'security.syscalls.intercept.sched_setscheduler': bool,
  'security.syscalls.intercept.setxattr': bool,
  'security.syscalls.whitelist': any,
};
const vmOnly: Record<string, Check> = {
  'limits.memory.hugepages': bool,
  'migration.stateful': bool,
  'raw.qemu': any,
  'raw.qemu.conf': any,
  'security.agent.metrics': bool,
  'security.secureboot': bool,
  'agent.nic_config': bool,
  'volatile.apply_nvram': bool,
};
const volatileDeviceSuffixes = [
  '.hwaddr',
  '.name',
  '.host_name',
  '.mtu',
  '.created',
  '.id',
  '.vlan',
  '.spoofcheck',
  '.last_state.vf.parent',
  '.apply_quota',
  '.ceph_rbd',
  '.driver',
  '.uuid',
];
const freePrefixes = ['environment.', 'user.', 'image.', 'limits.kernel.'];

/** Incus 6.0.4 renamed devlxd to guestapi and added auto-restart (observed: the old names are unknown keys there). */
const incusRenamed: Record<string, string> = { 'security.devlxd': 'security.guestapi', 'security.devlxd.images': 'security.guestapi.images' };
const incusOnly: Record<string, Check> = {
  'security.guestapi': bool,
  'security.guestapi.images': bool,
  'boot.autorestart': bool,
  'volatile.uuid.generation': uuid,
};

/** The check of a key, or the daemon's "Unknown configuration key" text. */
function checkerOf(key: string, type: InstanceType | 'profile', revision: ApiRevision): Check | string {
  if (revision === 'later') {
    if (key in incusRenamed) return `Unknown configuration key: ${key}`;
    const incus = incusOnly[key];
    if (incus && !(key === 'security.guestapi.images' && type === 'virtual-machine')) return incus;
  }
  const own = anyType[key] ?? (type !== 'virtual-machine' ? containerOnly[key] : undefined) ?? (type !== 'container' ? vmOnly[key] : undefined);
  if (own) return own;
  if (key.startsWith('volatile.') && volatileDeviceSuffixes.some((s) => key.endsWith(s))) return any;
  if (freePrefixes.some((p) => key.startsWith(p) && key.length > p.length)) return any;
  if (type !== 'virtual-machine' && key.startsWith('linux.sysctl.')) return any;
  return `Unknown configuration key: ${key}`;
}

/**
 * Checks instance (or profile) config as LXD 5.0.2 does (shared/instance.go ConfigKeyChecker and
 * the validators of shared/validate), or Incus 6.0.4 in the later revision (the same table with
 * its renamed and added keys); returns the error text the daemon reports after "Invalid config: ",
 * or undefined when valid.
 */
export function configError(config: Record<string, string>, type: InstanceType | 'profile', revision: ApiRevision = 'earlier'): string | undefined {
  for (const [key, value] of Object.entries(config)) {
    if (type === 'profile' && key.startsWith('volatile.')) return 'Volatile keys can only be set on instances';
    if (type === 'profile' && key.startsWith('image.')) return 'Image keys can only be set on instances';
    const check = checkerOf(key, type, revision);
    if (typeof check === 'string') return check;
    const err = check(value);
    if (err) return err;
  }
  return undefined;
}

const deviceTypes = new Set(['none', 'nic', 'infiniband', 'gpu', 'disk', 'proxy', 'usb', 'unix-char', 'unix-block', 'unix-hotplug', 'tpm', 'pci']);

/**
 * The refusal of a creation's devices, as the daemon words it after "Failed creating instance
 * record: " (LXD 5.0.2 and Incus quote the type differently), or undefined.
 */
export function createDevicesError(devices: Record<string, Record<string, string>>, revision: ApiRevision): string | undefined {
  for (const dev of Object.values(devices)) {
    const type = dev.type ?? '';
    if (!deviceTypes.has(type)) return revision === 'later' ? `Invalid device type "${type}"` : `Invalid device type ${type}`;
  }
  return undefined;
}

/** Device check: the type must be one LXD 5.0.2 loads; returns the text after "Invalid devices: ". */
export function devicesError(devices: Record<string, Record<string, string>>): string | undefined {
  for (const [name, dev] of Object.entries(devices)) {
    const type = dev.type ?? '';
    if (type === '') return `Device validation failed for "${name}": Failed loading device "${name}": Missing device type in config`;
    if (!deviceTypes.has(type)) return `Device validation failed for "${name}": Failed loading device "${name}": Unsupported device type`;
  }
  return undefined;
}
