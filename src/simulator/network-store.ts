import type { ApiRevision } from '../client/status-code.js';
import type { IdSource } from './ids.js';
import { SimHttpError } from './envelope.js';

/** A network as GET /1.0/networks/<name> shows it (without `used_by`, which depends on instances and profiles). */
export interface SimNetwork {
  name: string;
  description: string;
  type: string;
  managed: boolean;
  config: Record<string, string>;
}

const managedTypes = new Set(['bridge', 'macvlan', 'sriov', 'ovn', 'physical']);

/**
 * Networks: the host's unmanaged `eth0`, the managed bridge `lxdbr0` the default profile's NIC uses,
 * and the managed networks clients create (`lxc network create`), renamed, updated and deleted.
 * Nothing is configured on a host: a bridge is a record with the addresses the daemon would choose.
 */
export class NetworkStore {
  private readonly networks = new Map<string, SimNetwork>();

  constructor() {
    this.networks.set('eth0', { name: 'eth0', description: '', type: 'physical', managed: false, config: {} });
    this.networks.set('lxdbr0', {
      name: 'lxdbr0',
      description: '',
      type: 'bridge',
      managed: true,
      config: { 'ipv4.address': '10.189.62.1/24', 'ipv4.nat': 'true', 'ipv6.address': 'none' },
    });
  }

  /** Every network, in creation order. */
  list(): SimNetwork[] {
    return [...this.networks.values()];
  }

  /** The network, or 404 "Network not found". */
  get(name: string): SimNetwork {
    const net = this.networks.get(name);
    if (!net) throw new SimHttpError(404, 'Network not found');
    return net;
  }

  /** The managed network, or 404 (an unmanaged interface cannot be changed through the API). */
  managed(name: string): SimNetwork {
    const net = this.networks.get(name);
    if (!net?.managed) throw new SimHttpError(404, 'Failed loading network: Network not found');
    return net;
  }

  /** Creates a managed network; a bridge gets `ipv4.address` (a free /24) and `ipv4.nat` unless given, as `auto` does. */
  create(name: unknown, type: string, description: string, config: Record<string, string>, ids: IdSource, revision: ApiRevision): SimNetwork {
    // The texts and statuses of both daemons (observed on LXD 5.0.2 and Incus 6.0.4).
    if (typeof name !== 'string' || name === '') throw new SimHttpError(400, 'No name provided');
    if (name.length > 15) throw new SimHttpError(400, 'Network interface is too long (maximum 15 characters)');
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name === '.' || name === '..')
      throw new SimHttpError(400, 'Network interface contains invalid characters');
    if (this.networks.has(name))
      throw revision === 'later' ? new SimHttpError(409, `Network "${name}" already exists`) : new SimHttpError(400, 'The network already exists');
    if (!managedTypes.has(type)) throw new SimHttpError(400, 'Unknown driver');
    const filled = { ...config };
    if (type === 'bridge') {
      if (!filled['ipv4.address'] || filled['ipv4.address'] === 'auto')
        filled['ipv4.address'] = `10.${20 + Math.floor(ids.float() * 200)}.${Math.floor(ids.float() * 250)}.1/24`;
      filled['ipv4.nat'] ??= 'true';
      if (!filled['ipv6.address'] || filled['ipv6.address'] === 'auto') filled['ipv6.address'] = 'none';
    }
    const net: SimNetwork = { name, description, type, managed: true, config: filled };
    this.networks.set(name, net);
    return net;
  }

  /** Renames a managed network; 409 when the new name is taken. */
  rename(name: string, to: unknown): void {
    const net = this.managed(name);
    if (typeof to !== 'string' || to === '') throw new SimHttpError(400, 'No name provided');
    if (this.networks.has(to)) throw new SimHttpError(409, `Network "${to}" already exists`);
    this.networks.delete(name);
    net.name = to;
    this.networks.set(to, net);
  }

  /** Deletes a managed network. */
  remove(name: string): void {
    this.managed(name);
    this.networks.delete(name);
  }
}
