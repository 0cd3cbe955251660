import { SimHttpError } from './envelope.js';

/** A custom storage volume. */
export interface SimVolume {
  name: string;
  description: string;
  config: Record<string, string>;
  contentType: 'filesystem' | 'block';
  project: string;
}

/** A storage pool and its custom volumes (instance volumes are derived from the instances). */
export interface SimPool {
  name: string;
  driver: string;
  description: string;
  config: Record<string, string>;
  volumes: Map<string, SimVolume>;
}

const drivers = new Set(['dir', 'btrfs', 'lvm', 'zfs']);

/**
 * Storage pools: `default` (driver `dir`, with the custom volume `data`) and those clients create,
 * with their custom volumes. Nothing is stored anywhere: a pool is a record.
 */
export class StoragePools {
  private readonly pools = new Map<string, SimPool>();

  constructor() {
    this.create('default', 'dir', '', {});
    this.createVolume('default', 'default', 'data', 'shared data', { size: '1GiB' }, 'filesystem');
  }

  /** Every pool, in creation order. */
  list(): SimPool[] {
    return [...this.pools.values()];
  }

  /** The pool, or 404 "Storage pool not found". */
  get(name: string): SimPool {
    const pool = this.pools.get(name);
    if (!pool) throw new SimHttpError(404, 'Storage pool not found');
    return pool;
  }

  /** Creates a pool; a `dir` pool gets its `source` under the daemon's directory. */
  create(name: unknown, driver: string, description: string, config: Record<string, string>): SimPool {
    if (typeof name !== 'string' || name === '') throw new SimHttpError(400, 'No name provided');
    // The texts and statuses of both daemons (observed on LXD 5.0.2 and Incus 6.0.4).
    if (name.includes('/')) throw new SimHttpError(400, 'Storage pool names may not contain slashes');
    if (this.pools.has(name)) throw new SimHttpError(409, 'The storage pool already exists: The record already exists');
    if (!drivers.has(driver)) throw new SimHttpError(500, 'Unknown driver');
    const pool: SimPool = { name, driver, description, config: { source: `/var/lib/lxd/storage-pools/${name}`, ...config }, volumes: new Map() };
    this.pools.set(name, pool);
    return pool;
  }

  /** Deletes a pool. */
  remove(name: string): void {
    this.get(name);
    this.pools.delete(name);
  }

  /** A custom volume of a pool in a project, or 404 "Storage volume not found". */
  volume(pool: string, project: string, name: string): SimVolume {
    const vol = this.get(pool).volumes.get(`${project}/${name}`);
    if (!vol) throw new SimHttpError(404, 'Storage pool volume not found');
    return vol;
  }

  /** Creates a custom volume; 409 when the name is taken in the project. */
  createVolume(
    pool: string,
    project: string,
    name: unknown,
    description: string,
    config: Record<string, string>,
    contentType: SimVolume['contentType'],
  ): SimVolume {
    const p = this.get(pool);
    if (typeof name !== 'string' || name === '') throw new SimHttpError(400, 'No name provided');
    if (name.includes('/')) throw new SimHttpError(400, 'Storage volume names may not contain slashes');
    if (this.customVolumes(pool, project).some((v) => v.name === name)) throw new SimHttpError(409, 'Volume by that name already exists');
    const vol: SimVolume = { name, description, config, contentType, project };
    p.volumes.set(`${project}/${name}`, vol);
    return vol;
  }

  /** The custom volumes of a pool, in one project or all (null). */
  customVolumes(pool: string, project: string | null): SimVolume[] {
    return [...this.get(pool).volumes.values()].filter((v) => project === null || v.project === project);
  }

  /** Renames a custom volume. */
  renameVolume(pool: string, project: string, name: string, to: unknown): SimVolume {
    const vol = this.volume(pool, project, name);
    if (typeof to !== 'string' || to === '') throw new SimHttpError(400, 'No name provided');
    if (this.customVolumes(pool, project).some((v) => v.name === to)) throw new SimHttpError(409, 'Volume by that name already exists');
    this.removeVolume(pool, project, name);
    vol.name = to;
    this.get(pool).volumes.set(`${project}/${to}`, vol);
    return vol;
  }

  /** Deletes a custom volume. */
  removeVolume(pool: string, project: string, name: string): void {
    this.volume(pool, project, name);
    this.get(pool).volumes.delete(`${project}/${name}`);
  }
}
