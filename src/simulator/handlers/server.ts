import { sync, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';

/** A representative subset of LXD 5.0.2's api_extensions, enough for clients that probe features. */
const earlierExtensions = [
  'storage_zfs_remove_snapshots', 'container_host_shutdown_timeout', 'container_stop_priority', 'container_syscall_filtering',
  'auth_pki', 'container_last_used_at', 'etag', 'patch', 'usb_devices', 'https_allowed_credentials', 'image_compression_algorithm',
  'directory_manipulation', 'container_cpu_time', 'storage', 'operation_description', 'container_snapshot_stateful_migration',
  'storage_api', 'candid_authentication', 'event_lifecycle', 'clustering', 'event_logging', 'snapshot_expiry',
  'snapshot_expiry_creation', 'network_state', 'api_filtering', 'instances', 'instance_types', 'virtual-machines',
  'event_location', 'clustering_events', 'certificate_token', 'instance_get_full', 'container_exec_recording',
  'event_lifecycle_requestor_address', 'operation_wait', 'projects', 'resources_cpu_isolated', 'instance_allow_inconsistent_copy',
];

const laterExtensions = [...earlierExtensions, 'event_lifecycle_name_and_project', 'instance_ready_state', 'api_filtering_extended', 'storage_volumes_all_projects'];

/** GET / and GET /1.0. */
export function registerServer(router: Router): void {
  router.on('GET', '/', () => sync(['/1.0']), { untrusted: true });
  router.on('GET', '/1.0', server, { untrusted: true });
}

/** GET /1.0: `auth` is "trusted" or "untrusted" (ServerUntrusted shape: no config, no environment). */
function server(req: SimRequest): SimResponse {
  const { ctx, info } = req;
  const api_extensions = ctx.opts.revision === 'earlier' ? earlierExtensions : laterExtensions;
  const base = { api_extensions, api_status: 'stable', api_version: '1.0', auth: info.trusted ? 'trusted' : 'untrusted', public: false, auth_methods: ['tls'] };
  if (!info.trusted) return sync(base);
  return sync({
    ...base,
    config: {},
    environment: {
      addresses: ctx.opts.listen.filter((l) => l.startsWith('https://')).map((l) => l.slice('https://'.length)),
      architectures: ['x86_64', 'i686'],
      certificate: '',
      certificate_fingerprint: '',
      driver: 'lxc | qemu',
      driver_version: '5.0.1 | 7.2.0',
      firewall: 'nftables',
      kernel: 'Linux',
      kernel_architecture: 'x86_64',
      kernel_features: {},
      kernel_version: '6.1.0',
      lxc_features: {},
      os_name: 'Debian GNU/Linux',
      os_version: '12',
      project: info.project,
      server: ctx.opts.revision === 'earlier' ? 'lxd' : 'incus',
      server_clustered: false,
      server_event_mode: 'full-mesh',
      server_name: 'reflex-sim',
      server_pid: process.pid,
      server_version: ctx.opts.revision === 'earlier' ? '5.0.2' : '6.0.0',
      storage: 'dir',
      storage_version: '1',
      storage_supported_drivers: [{ Name: 'dir', Version: '1', Remote: false }],
    },
  });
}
