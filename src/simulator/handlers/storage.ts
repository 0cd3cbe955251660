import { created, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimInstance } from '../instance-model.js';
import type { SimPool, SimVolume } from '../storage-pools.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, filterOf, recursionOf, stringMap } from './common.js';

/**
 * /1.0/storage-pools CRUD and their volumes: the instances' own (read-only, derived) and custom
 * volumes (create, list, show, update, rename, delete), synchronous as in LXD 5.0.2. A custom volume
 * is attached as a `disk` device with `pool` and `source`, which makes it used by that instance.
 */
export function registerStorage(router: Router): void {
  router.on('GET', '/1.0/storage-pools', (req) => {
    const pools = req.ctx.pools.list();
    return sync(recursionOf(req) === 0 ? pools.map((p) => `/1.0/storage-pools/${p.name}`) : pools.map((p) => renderPool(req, p)));
  });
  router.on('POST', '/1.0/storage-pools', (req) => {
    const body = bodyObject(req);
    const pool = req.ctx.pools.create(
      body.name,
      typeof body.driver === 'string' ? body.driver : '',
      typeof body.description === 'string' ? body.description : '',
      stringMap(body.config, 'config') ?? {},
    );
    return created(`/1.0/storage-pools/${pool.name}`);
  });
  router.on('GET', '/1.0/storage-pools/:pool', (req) => sync(renderPool(req, req.ctx.pools.get(req.params.pool!))));
  router.on('PUT', '/1.0/storage-pools/:pool', (req) => updatePool(req, false));
  router.on('PATCH', '/1.0/storage-pools/:pool', (req) => updatePool(req, true));
  router.on('DELETE', '/1.0/storage-pools/:pool', (req) => {
    const pool = req.ctx.pools.get(req.params.pool!);
    // As both daemons: a pool holding instances, or custom volumes, is in use.
    if (poolUsers(req, pool).length > 0 || req.ctx.pools.customVolumes(pool.name, null).length > 0)
      throw new SimHttpError(400, 'The storage pool is currently in use');
    req.ctx.pools.remove(pool.name);
    return sync({});
  });
  router.on('GET', '/1.0/storage-pools/:pool/resources', (req) => {
    req.ctx.pools.get(req.params.pool!);
    return sync({ inodes: { total: 16_777_216, used: 428_786 }, space: { total: 270_553_174_016, used: 24_748_187_648 } });
  });
  router.on('GET', '/1.0/storage-pools/:pool/volumes', (req) => volumes(req, undefined));
  router.on('GET', '/1.0/storage-pools/:pool/volumes/:type', (req) => volumes(req, req.params.type));
  router.on('POST', '/1.0/storage-pools/:pool/volumes/custom', createVolume);
  router.on('POST', '/1.0/storage-pools/:pool/volumes', createVolume);
  router.on('POST', '/1.0/storage-pools/:pool/volumes/:type', (req) => {
    req.ctx.pools.get(req.params.pool!);
    throw new SimHttpError(400, `Currently not allowed to create storage volumes of type "${req.params.type}"`);
  });
  router.on('GET', '/1.0/storage-pools/:pool/volumes/:type/:volume', (req) => {
    const vol = allVolumes(req, req.params.pool!, req.info.project).find((v) => v.type === req.params.type && v.name === req.params.volume);
    if (!vol) throw new SimHttpError(404, 'Storage pool volume not found');
    return sync(vol);
  });
  router.on('PUT', '/1.0/storage-pools/:pool/volumes/custom/:volume', (req) => updateVolume(req, false));
  router.on('PATCH', '/1.0/storage-pools/:pool/volumes/custom/:volume', (req) => updateVolume(req, true));
  router.on('POST', '/1.0/storage-pools/:pool/volumes/custom/:volume', (req) => {
    const { pools } = req.ctx;
    const vol = pools.volume(req.params.pool!, req.info.project, req.params.volume!);
    if (volumeUsers(req, req.params.pool!, vol).length > 0) throw new SimHttpError(400, 'Volume is still in use by running instances');
    const body = bodyObject(req);
    if (typeof body.pool === 'string' && body.pool !== '' && body.pool !== req.params.pool)
      throw new SimHttpError(400, 'Moving a volume between pools is not simulated');
    const renamed = pools.renameVolume(req.params.pool!, req.info.project, req.params.volume!, body.name);
    return created(`/1.0/storage-pools/${req.params.pool}/volumes/custom/${renamed.name}`);
  });
  router.on('DELETE', '/1.0/storage-pools/:pool/volumes/custom/:volume', (req) => {
    const vol = req.ctx.pools.volume(req.params.pool!, req.info.project, req.params.volume!);
    const users = volumeUsers(req, req.params.pool!, vol);
    if (users.length > 0) throw new SimHttpError(400, `The storage volume is still in use`);
    req.ctx.pools.removeVolume(req.params.pool!, req.info.project, vol.name);
    return sync({});
  });
}

function updatePool(req: SimRequest, merge: boolean): SimResponse {
  const pool = req.ctx.pools.get(req.params.pool!);
  const body = bodyObject(req);
  const config = stringMap(body.config, 'config');
  if (config || !merge) pool.config = { source: pool.config.source!, ...(merge ? pool.config : {}), ...config };
  if (typeof body.description === 'string') pool.description = body.description;
  return sync({});
}

function updateVolume(req: SimRequest, merge: boolean): SimResponse {
  const vol = req.ctx.pools.volume(req.params.pool!, req.info.project, req.params.volume!);
  const body = bodyObject(req);
  const config = stringMap(body.config, 'config');
  if (config || !merge) vol.config = { ...(merge ? vol.config : {}), ...config };
  if (typeof body.description === 'string') vol.description = body.description;
  return sync({});
}

/** POST …/volumes/custom `{name, config, content_type}`: synchronous, 200 with no metadata, as LXD 5.0.2 creates a volume without a source. */
function createVolume(req: SimRequest): SimResponse {
  const body = bodyObject(req);
  if (body.type !== undefined && body.type !== 'custom') throw new SimHttpError(400, `Invalid storage volume type "${String(body.type)}"`);
  if (body.source && typeof body.source === 'object' && (body.source as Record<string, unknown>).name)
    throw new SimHttpError(400, 'Copying storage volumes is not simulated');
  req.ctx.store.assertProject(req.info.project);
  req.ctx.pools.createVolume(
    req.params.pool!,
    req.info.project,
    body.name,
    typeof body.description === 'string' ? body.description : '',
    stringMap(body.config, 'config') ?? {},
    body.content_type === 'block' ? 'block' : 'filesystem',
  );
  return sync(null);
}

/** A pool; `used_by` lists instances and snapshots on it, profiles whose root disk is on it, and its custom volumes. */
function renderPool(req: SimRequest, pool: SimPool): Record<string, unknown> {
  return {
    config: pool.config,
    description: pool.description,
    name: pool.name,
    driver: pool.driver,
    used_by: poolUsers(req, pool),
    status: 'Created',
    locations: ['none'],
  };
}

function projectSuffix(project: string): string {
  return project === 'default' ? '' : `?project=${project}`;
}

/** Which pool an instance's root disk is on (its own device, or its profiles'). */
function rootPool(inst: SimInstance): string | undefined {
  const devices = { ...inst.expandProfiles(inst.profiles).devices, ...inst.devices };
  return Object.values(devices).find((d) => d.type === 'disk' && d.path === '/')?.pool;
}

function poolUsers(req: SimRequest, pool: SimPool): string[] {
  const { store } = req.ctx;
  const onPool = store.list(null).filter((i) => rootPool(i) === pool.name);
  return [
    ...onPool.map((i) => i.url()),
    ...onPool.flatMap((i) => [...i.snapshots.keys()].map((s) => `/1.0/instances/${i.name}/snapshots/${s}${projectSuffix(i.project)}`)),
    ...store.projects.flatMap((project) =>
      store.profiles.profileProject(project) !== project
        ? []
        : store.profiles
            .listProfiles(project)
            .filter((p) => Object.values(p.devices).some((d) => d.type === 'disk' && d.pool === pool.name))
            .map((p) => `/1.0/profiles/${p.name}${projectSuffix(project)}`),
    ),
    ...req.ctx.pools.customVolumes(pool.name, null).map((v) => `/1.0/storage-pools/${pool.name}/volumes/custom/${v.name}${projectSuffix(v.project)}`),
  ];
}

/** Instances and profiles with a disk device naming this custom volume. */
function volumeUsers(req: SimRequest, pool: string, vol: SimVolume): string[] {
  const uses = (devices: Record<string, Record<string, string>>): boolean =>
    Object.values(devices).some((d) => d.type === 'disk' && d.pool === pool && d.source === vol.name);
  const { store } = req.ctx;
  return [
    ...store
      .list(vol.project)
      .filter((i) => uses(i.devices))
      .map((i) => i.url()),
    ...store.profiles
      .listProfiles(store.profiles.profileProject(vol.project))
      .filter((p) => uses(p.devices))
      .map((p) => `/1.0/profiles/${p.name}${projectSuffix(vol.project)}`),
  ];
}

/** The instance volumes on a pool (one per instance whose root disk is there) and its custom volumes. */
function allVolumes(req: SimRequest, poolName: string, project: string | null): Record<string, unknown>[] {
  const { ctx } = req;
  const pool = ctx.pools.get(poolName);
  if (project !== null) ctx.store.assertProject(project);
  const instances = ctx.store
    .list(project)
    .filter((i) => rootPool(i) === pool.name)
    .map((i) => ({
      config: {},
      description: '',
      name: i.name,
      type: i.type,
      used_by: [i.url()],
      location: 'none',
      content_type: i.type === 'container' ? 'filesystem' : 'block',
      project: i.project,
    }));
  const custom = ctx.pools.customVolumes(pool.name, project).map((v) => ({
    config: v.config,
    description: v.description,
    name: v.name,
    type: 'custom',
    used_by: volumeUsers(req, pool.name, v),
    location: 'none',
    content_type: v.contentType,
    project: v.project,
  }));
  return [...instances, ...custom];
}

/**
 * The volumes of a pool, all or of one type. The filter applies only on the later revision, as
 * the seed says; the earlier one ignores it.
 */
function volumes(req: SimRequest, type: string | undefined): SimResponse {
  const { ctx, info } = req;
  const project = info.allProjects ? null : info.project;
  let all = allVolumes(req, req.params.pool!, project);
  if (type) all = all.filter((v) => v.type === type);
  const predicate = ctx.opts.revision === 'later' ? filterOf(req) : undefined;
  const hits = predicate ? all.filter(predicate) : all;
  if (recursionOf(req) >= 1) return sync(hits);
  return sync(hits.map((v) => `/1.0/storage-pools/${req.params.pool}/volumes/${String(v.type)}/${String(v.name)}`));
}
