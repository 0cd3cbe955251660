import { advertisedExtensions } from '../api-extensions.js';
import { sync, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';

/** GET / and GET /1.0. */
export function registerServer(router: Router): void {
  router.on('GET', '/', () => sync(['/1.0']), { untrusted: true });
  router.on('GET', '/1.0', server, { untrusted: true });
}

/** GET /1.0: `auth` is "trusted" or "untrusted" (ServerUntrusted shape: no config, no environment). */
function server(req: SimRequest): SimResponse {
  const { ctx, info } = req;
  const api_extensions = advertisedExtensions[ctx.opts.revision];
  const base = {
    api_extensions,
    api_status: 'stable',
    api_version: '1.0',
    auth: info.trusted ? 'trusted' : 'untrusted',
    public: false,
    auth_methods: ['tls'],
    // Incus says who it took the caller for (the unix socket's user, or the client certificate).
    ...(ctx.opts.revision === 'later' && info.trusted
      ? info.requestor.protocol === 'unix'
        ? { auth_user_name: 'root', auth_user_method: 'unix' }
        : { auth_user_name: info.fingerprint ?? '', auth_user_method: 'tls' }
      : {}),
  };
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
      server_clustered: ctx.cluster !== undefined,
      server_event_mode: 'full-mesh',
      server_name: ctx.cluster?.serverName ?? 'reflex-sim',
      server_pid: process.pid,
      server_version: ctx.opts.revision === 'earlier' ? '5.0.2' : '6.0.4',
      storage: 'dir',
      storage_version: '1',
      storage_supported_drivers: [{ Name: 'dir', Version: '1', Remote: false }],
    },
  });
}
