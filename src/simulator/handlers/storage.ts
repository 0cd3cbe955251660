import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { filterOf, recursionOf } from './common.js';

/** /1.0/storage-pools and the volumes of the single `dir` pool "default". */
export function registerStorage(router: Router): void {
  router.on('GET', '/1.0/storage-pools', (req) => sync(recursionOf(req) === 0 ? ['/1.0/storage-pools/default'] : [pool(req)]));
  router.on('GET', '/1.0/storage-pools/:pool', (req) => {
    if (req.params.pool !== 'default') throw new SimHttpError(404, 'Storage pool not found');
    return sync(pool(req));
  });
  router.on('GET', '/1.0/storage-pools/:pool/resources', (req) => {
    if (req.params.pool !== 'default') throw new SimHttpError(404, 'Storage pool not found');
    return sync({ inodes: { total: 16_777_216, used: 428_786 }, space: { total: 270_553_174_016, used: 24_748_187_648 } });
  });
  router.on('GET', '/1.0/storage-pools/:pool/volumes', volumes);
}

/** The `dir` pool; used by every instance and by the profiles whose root disk is on it. */
function pool(req: SimRequest): Record<string, unknown> {
  const { store } = req.ctx;
  // Instances, then their snapshots (which `lxc storage info` lists under the instance's name again).
  const usedBy = [
    ...store.list(null).map((i) => i.url()),
    ...store
      .list(null)
      .flatMap((i) =>
        [...i.snapshots.keys()].map((s) => `/1.0/instances/${i.name}/snapshots/${s}${i.project === 'default' ? '' : `?project=${i.project}`}`),
      ),
    ...store.projects.flatMap((project) =>
      store.profiles.profileProject(project) !== project
        ? []
        : store.profiles
            .listProfiles(project)
            .filter((p) => Object.values(p.devices).some((d) => d.type === 'disk' && d.pool === 'default'))
            .map((p) => `/1.0/profiles/${p.name}${project === 'default' ? '' : `?project=${project}`}`),
    ),
  ];
  return {
    config: { source: '/var/lib/lxd/storage-pools/default' },
    description: '',
    name: 'default',
    driver: 'dir',
    used_by: usedBy,
    status: 'Created',
    locations: ['none'],
  };
}

/**
 * One volume per instance (type container / virtual-machine) plus one custom volume. The filter
 * applies only on the later revision, as the seed says; the earlier one ignores it.
 */
function volumes(req: SimRequest): SimResponse {
  const { ctx, info } = req;
  if (req.params.pool !== 'default') throw new SimHttpError(404, 'Storage pool not found');
  const project = info.allProjects ? null : info.project;
  if (project !== null) ctx.store.assertProject(project);
  const all: Record<string, unknown>[] = ctx.store.list(project).map((i) => ({
    config: {},
    description: '',
    name: i.name,
    type: i.type,
    used_by: [i.url()],
    location: 'none',
    content_type: i.type === 'container' ? 'filesystem' : 'block',
    project: i.project,
  }));
  if (project === null || project === 'default') {
    all.push({
      config: { size: '1GiB' },
      description: 'shared data',
      name: 'data',
      type: 'custom',
      used_by: [],
      location: 'none',
      content_type: 'filesystem',
      project: 'default',
    });
  }
  const predicate = ctx.opts.revision === 'later' ? filterOf(req) : undefined;
  const hits = predicate ? all.filter(predicate) : all;
  if (recursionOf(req) >= 1) return sync(hits);
  return sync(hits.map((v) => `/1.0/storage-pools/default/volumes/${String(v.type)}/${String(v.name)}`));
}
