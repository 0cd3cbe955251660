import { created, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimNetwork } from '../network-store.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, recursionOf, stringMap } from './common.js';

/**
 * /1.0/networks CRUD: the host's unmanaged `eth0`, the managed bridge `lxdbr0`, and managed
 * networks clients create, update (PUT/PATCH), rename and delete, synchronously as the daemon does.
 * A network is used by the instances and profiles with a `nic` device naming it (`network=`).
 */
export function registerNetworks(router: Router): void {
  router.on('GET', '/1.0/networks', (req) => {
    projectOf(req);
    const nets = req.ctx.networks.list();
    return sync(recursionOf(req) === 0 ? nets.map((n) => `/1.0/networks/${n.name}`) : nets.map((n) => render(req, n)));
  });
  router.on('POST', '/1.0/networks', (req) => {
    projectOf(req);
    const body = bodyObject(req);
    const net = req.ctx.networks.create(
      body.name,
      typeof body.type === 'string' && body.type !== '' ? body.type : 'bridge',
      typeof body.description === 'string' ? body.description : '',
      stringMap(body.config, 'config') ?? {},
      req.ctx.ids,
      req.ctx.opts.revision,
    );
    return created(`/1.0/networks/${net.name}`);
  });
  router.on('GET', '/1.0/networks/:network', (req) => {
    projectOf(req);
    return sync(render(req, req.ctx.networks.get(req.params.network!)));
  });
  router.on('PUT', '/1.0/networks/:network', (req) => update(req, false));
  router.on('PATCH', '/1.0/networks/:network', (req) => update(req, true));
  router.on('POST', '/1.0/networks/:network', (req) => {
    const net = req.ctx.networks.managed(req.params.network!);
    if (usersOf(req, net.name).length > 0) throw new SimHttpError(400, 'Network is currently in use');
    const body = bodyObject(req);
    req.ctx.networks.rename(net.name, body.name);
    return created(`/1.0/networks/${String(body.name)}`);
  });
  router.on('DELETE', '/1.0/networks/:network', (req) => {
    const net = req.ctx.networks.managed(req.params.network!);
    if (usersOf(req, net.name).length > 0) throw new SimHttpError(400, 'The network is currently in use');
    req.ctx.networks.remove(net.name);
    return sync({});
  });
}

function projectOf(req: SimRequest): string {
  const project = req.info.project;
  if (!req.ctx.store.profiles.hasProject(project)) throw new SimHttpError(404, `Failed to load project "${project}": Project not found`);
  return project;
}

function update(req: SimRequest, merge: boolean): SimResponse {
  const net = req.ctx.networks.managed(req.params.network!);
  const body = bodyObject(req);
  const config = stringMap(body.config, 'config');
  if (config || !merge) net.config = { ...(merge ? net.config : {}), ...config };
  if (typeof body.description === 'string') net.description = body.description;
  return sync({});
}

/** Profiles (of default) and instances whose NICs name the network. */
function usersOf(req: SimRequest, name: string): string[] {
  const { store } = req.ctx;
  const names = (devices: Record<string, Record<string, string>>): boolean =>
    Object.values(devices).some((d) => d.type === 'nic' && d.network === name);
  const profiles = store.profiles
    .listProfiles('default')
    .filter((p) => names(p.devices))
    .map((p) => `/1.0/profiles/${p.name}`);
  const instances = store
    .list(null)
    .filter((i) => names({ ...i.expandProfiles(i.profiles).devices, ...i.devices }))
    .map((i) => i.url());
  return [...profiles, ...instances];
}

function render(req: SimRequest, n: SimNetwork): Record<string, unknown> {
  if (!n.managed)
    return { config: n.config, description: n.description, locations: null, managed: false, name: n.name, status: '', type: n.type, used_by: null };
  return {
    config: n.config,
    description: n.description,
    locations: ['none'],
    managed: true,
    name: n.name,
    status: 'Created',
    type: n.type,
    used_by: usersOf(req, n.name),
  };
}
