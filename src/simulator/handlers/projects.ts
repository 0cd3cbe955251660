import { createHash } from 'node:crypto';
import { created, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimProject } from '../profile-store.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, recursionOf, stringMap } from './common.js';

/** /1.0/projects: list, create, show, update, delete (all synchronous, as in LXD 5.0.2). */
export function registerProjects(router: Router): void {
  router.on('GET', '/1.0/projects', list);
  router.on('POST', '/1.0/projects', create);
  router.on('GET', '/1.0/projects/:project', (req) => {
    const project = req.ctx.store.profiles.project(req.params.project!);
    return sync(render(req, project), etagOf(project));
  });
  router.on('PUT', '/1.0/projects/:project', (req) => update(req, false));
  router.on('PATCH', '/1.0/projects/:project', (req) => update(req, true));
  router.on('DELETE', '/1.0/projects/:project', remove);
}

function etagOf(p: SimProject): string {
  return `"${createHash('sha256')
    .update(JSON.stringify([p.description, p.config]))
    .digest('hex')}"`;
}

/** `used_by`: its instances, its own profiles (if it has them) and, for default, the images. */
function render(req: SimRequest, p: SimProject): Record<string, unknown> {
  const { store } = req.ctx;
  const suffix = p.name === 'default' ? '' : `?project=${p.name}`;
  const used = store.list(p.name).map((i) => i.url());
  if (store.profiles.profileProject(p.name) === p.name)
    used.push(...store.profiles.listProfiles(p.name).map((pr) => `/1.0/profiles/${pr.name}${suffix}`));
  if (p.name === 'default') used.push(...req.ctx.images.list().map((i) => `/1.0/images/${String(i.fingerprint)}`));
  return { config: p.config, description: p.description, name: p.name, used_by: used };
}

function list(req: SimRequest): SimResponse {
  const projects = req.ctx.store.profiles.projectNames().map((n) => req.ctx.store.profiles.project(n));
  return sync(recursionOf(req) === 0 ? projects.map((p) => `/1.0/projects/${p.name}`) : projects.map((p) => render(req, p)));
}

function create(req: SimRequest): SimResponse {
  const body = bodyObject(req);
  const project = req.ctx.store.profiles.createProject(
    body.name,
    typeof body.description === 'string' ? body.description : '',
    stringMap(body.config, 'config') ?? {},
  );
  return created(`/1.0/projects/${project.name}`);
}

function update(req: SimRequest, merge: boolean): SimResponse {
  const project = req.ctx.store.profiles.project(req.params.project!);
  const body = bodyObject(req);
  const config = stringMap(body.config, 'config');
  if (typeof body.description === 'string') project.description = body.description;
  if (merge) Object.assign(project.config, config ?? {});
  else project.config = config ?? {};
  return sync({});
}

function remove(req: SimRequest): SimResponse {
  const name = req.params.project!;
  const { store } = req.ctx;
  store.profiles.project(name);
  if (name !== 'default' && store.list(name).length > 0) throw new SimHttpError(400, 'Only empty projects can be removed');
  store.profiles.deleteProject(name);
  return sync({});
}
