import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { recursionOf } from './common.js';

/**
 * What a standalone host answers besides instances: networks (a managed fake bridge `lxdbr0`
 * and the host's unmanaged `eth0`), cluster endpoints as a server that is not clustered, and an
 * empty warning list.
 */
export function registerHost(router: Router): void {
  router.on('GET', '/1.0/networks', (req) => {
    const nets = networks(req);
    return sync(recursionOf(req) === 0 ? nets.map((n) => `/1.0/networks/${String(n.name)}`) : nets);
  });
  router.on('GET', '/1.0/networks/:network', (req) => {
    const net = networks(req).find((n) => n.name === req.params.network);
    if (!net) throw new SimHttpError(404, 'Network not found');
    return sync(net);
  });
  // LXD 5.0.2 answers GET /1.0/cluster on a standalone server; member lists are a 500.
  router.on('GET', '/1.0/cluster', () => sync({ server_name: '', enabled: false, member_config: [] }));
  router.on('GET', '/1.0/cluster/members', () => {
    throw new SimHttpError(500, 'Server is not clustered');
  });
  router.on('GET', '/1.0/cluster/members/:member', () => {
    throw new SimHttpError(500, 'Server is not clustered');
  });
  router.on('GET', '/1.0/warnings', () => sync([]));
}

function networks(req: SimRequest): Record<string, unknown>[] {
  const { store } = req.ctx;
  const project = req.info.project;
  if (!store.profiles.hasProject(project)) throw new SimHttpError(404, `Failed to load project "${project}": Project not found`);
  const users = store
    .list(null)
    .filter((i) =>
      Object.values(i.render(req.ctx.opts.revision).expanded_devices as Record<string, Record<string, string>>).some(
        (d) => d.type === 'nic' && d.network === 'lxdbr0',
      ),
    )
    .map((i) => i.url());
  const profileUsers = store.profiles
    .listProfiles('default')
    .filter((p) => Object.values(p.devices).some((d) => d.type === 'nic' && d.network === 'lxdbr0'))
    .map((p) => `/1.0/profiles/${p.name}`);
  return [
    { config: {}, description: '', locations: null, managed: false, name: 'eth0', status: '', type: 'physical', used_by: null },
    {
      config: { 'ipv4.address': '10.189.62.1/24', 'ipv4.nat': 'true', 'ipv6.address': 'none' },
      description: '',
      locations: ['none'],
      managed: true,
      name: 'lxdbr0',
      status: 'Created',
      type: 'bridge',
      used_by: [...profileUsers, ...users],
    },
  ];
}
