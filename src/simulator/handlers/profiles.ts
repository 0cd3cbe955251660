import { createHash } from 'node:crypto';
import { created, sync, SimHttpError, type SimResponse } from '../envelope.js';
import { configError, devicesError } from '../config-validation.js';
import type { SimProfile } from '../profile-store.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, deviceMap, recursionOf, stringMap } from './common.js';

/** /1.0/profiles: list, create, show, update (PUT/PATCH), rename, delete — synchronous, as in LXD 5.0.2. */
export function registerProfiles(router: Router): void {
  router.on('GET', '/1.0/profiles', list);
  router.on('POST', '/1.0/profiles', create);
  router.on('GET', '/1.0/profiles/:profile', (req) => {
    const project = projectOf(req);
    if (!req.ctx.store.profiles.listProfiles(project).some((p) => p.name === req.params.profile))
      throw new SimHttpError(404, 'Fetch profile: Profile not found');
    const profile = req.ctx.store.profiles.profile(project, req.params.profile!);
    return sync(
      render(req, profile),
      `"${createHash('sha256')
        .update(JSON.stringify([profile.config, profile.devices, profile.description]))
        .digest('hex')}"`,
    );
  });
  router.on('PUT', '/1.0/profiles/:profile', (req) => update(req, false));
  router.on('PATCH', '/1.0/profiles/:profile', (req) => update(req, true));
  router.on('POST', '/1.0/profiles/:profile', (req) => {
    const body = bodyObject(req);
    const project = projectOf(req);
    // Both daemons refuse these before looking at whether the profile is used (403).
    if (req.params.profile === 'default') throw new SimHttpError(403, 'The "default" profile cannot be renamed');
    if (usersOf(req, req.params.profile!).length > 0) throw new SimHttpError(400, 'Profile is currently in use');
    req.ctx.store.profiles.renameProfile(project, req.params.profile!, body.name);
    return sync({});
  });
  router.on('DELETE', '/1.0/profiles/:profile', (req) => {
    const project = projectOf(req);
    req.ctx.store.profiles.profile(project, req.params.profile!);
    if (req.params.profile === 'default') throw new SimHttpError(403, 'The "default" profile cannot be deleted');
    if (usersOf(req, req.params.profile!).length > 0) throw new SimHttpError(400, 'Profile is currently in use');
    req.ctx.store.profiles.deleteProfile(project, req.params.profile!);
    return sync({});
  });
}

/** The project of the request; an unknown one is 404 with the daemon's wording. */
function projectOf(req: SimRequest): string {
  const project = req.info.project;
  if (!req.ctx.store.profiles.hasProject(project)) throw new SimHttpError(404, `Failed loading project "${project}": Project not found`);
  return project;
}

/** Instances (of every project sharing these profiles) whose profile list names it. */
function usersOf(req: SimRequest, name: string): string[] {
  const { store } = req.ctx;
  const home = store.profiles.profileProject(projectOf(req));
  return store
    .list(null)
    .filter((i) => store.profiles.profileProject(i.project) === home && i.profiles.includes(name))
    .map((i) => i.url());
}

function render(req: SimRequest, p: SimProfile): Record<string, unknown> {
  const shown = { config: p.config, description: p.description, devices: p.devices, name: p.name, used_by: usersOf(req, p.name) };
  // Incus names the profile's project (profiles_all_projects); LXD 5.0.2 has no such field.
  return req.ctx.opts.revision === 'later' ? { ...shown, project: req.ctx.store.profiles.profileProject(projectOf(req)) } : shown;
}

function list(req: SimRequest): SimResponse {
  const profiles = req.ctx.store.profiles.listProfiles(projectOf(req));
  const suffix = req.info.project === 'default' ? '' : `?project=${req.info.project}`;
  return sync(recursionOf(req) === 0 ? profiles.map((p) => `/1.0/profiles/${p.name}${suffix}`) : profiles.map((p) => render(req, p)));
}

function create(req: SimRequest): SimResponse {
  const body = bodyObject(req);
  const description = typeof body.description === 'string' ? body.description : '';
  const config = stringMap(body.config, 'config');
  const devices = deviceMap(body.devices);
  checkProfile(req, config, devices);
  const project = projectOf(req);
  const profile = req.ctx.store.profiles.createProfile(project, body.name, description, config ?? {}, devices ?? {});
  return created(`/1.0/profiles/${profile.name}${project === 'default' ? '' : `?project=${project}`}`);
}

/** Profile config is checked like an instance's (any type), without the "Invalid config" prefix. */
function checkProfile(
  req: SimRequest,
  config: Record<string, string> | undefined,
  devices: Record<string, Record<string, string>> | undefined,
): void {
  const err = configError(config ?? {}, 'profile', req.ctx.opts.revision) ?? devicesError(devices ?? {});
  if (err) throw new SimHttpError(400, err);
}

function update(req: SimRequest, merge: boolean): SimResponse {
  const body = bodyObject(req);
  const change: Parameters<SimRequest['ctx']['store']['profiles']['updateProfile']>[2] = {};
  if (typeof body.description === 'string') change.description = body.description;
  const config = stringMap(body.config, 'config');
  const devices = deviceMap(body.devices);
  checkProfile(req, config, devices);
  if (config) change.config = config;
  if (devices) change.devices = devices;
  req.ctx.store.profiles.updateProfile(projectOf(req), req.params.profile!, change, merge);
  return sync({});
}
