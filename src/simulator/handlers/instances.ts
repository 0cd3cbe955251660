import { asyncOp, sync, syncRaw, SimHttpError, type SimResponse } from '../envelope.js';
import type { InstanceType, SimInstance, SimSnapshot } from '../instance-model.js';
import type { Router, SimRequest } from '../router.js';
import { StatusCode } from '../../client/status-code.js';
import { ClusterActions } from '../cluster-actions.js';
import { configError, createDevicesError, devicesError } from '../config-validation.js';
import { daemonTexts } from '../daemon-texts.js';
import { exec } from './exec.js';
import { restoreSnapshot } from './snapshots.js';
import {
  bodyObject,
  checkIfMatch,
  countCall,
  deviceMap,
  familiesFor,
  filterOf,
  instanceOf,
  instanceResources,
  recursionOf,
  stringMap,
  type InstanceFamily,
} from './common.js';

/** Routes of the instance collection and of single instances (state and snapshots live elsewhere). */
export function registerInstances(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const base = `/1.0/${family.prefix}`;
    router.on('GET', base, (req) => list(req, family));
    router.on('POST', base, (req) => create(req, family));
    router.on('GET', `${base}/:name`, (req) => get(req, family));
    router.on('PUT', `${base}/:name`, (req) => put(req, family));
    router.on('PATCH', `${base}/:name`, (req) => patch(req, family));
    router.on('DELETE', `${base}/:name`, (req) => remove(req, family));
    router.on('POST', `${base}/:name`, (req) => rename(req, family));
    router.on('POST', `${base}/:name/exec`, (req) => exec(req, family));
  }
}

function list(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx, info } = req;
  const project = info.allProjects ? null : info.project;
  // An unknown project lists as empty (observed), unlike every other collection.
  const revision = ctx.opts.revision;
  let members = ctx.store.list(project);
  if (family.type) members = members.filter((i) => i.type === family.type);
  const predicate = filterOf(req);
  if (predicate) members = members.filter((i) => predicate(i.render(revision)));
  const recursion = recursionOf(req);
  if (recursion === 0) return sync(members.map((i) => i.url(family.prefix)));
  if (recursion === 1) return syncRaw(`[${members.map((i) => i.json(revision)).join(',')}]`);
  return sync(members.map((i) => full(req, i)));
}

/**
 * The recursion=2 form: the instance plus state, snapshots and backups. No snapshots (and, since
 * backups are not served, always no backups) is `null`, not `[]`: both daemons leave the Go slice
 * nil when the instance has none.
 */
function full(req: SimRequest, inst: SimInstance): Record<string, unknown> {
  const revision = req.ctx.opts.revision;
  return {
    ...inst.render(revision),
    backups: null,
    state: inst.renderState(revision),
    snapshots: inst.snapshots.size === 0 ? null : [...inst.snapshots.values()].map((s) => inst.renderSnapshot(s)),
  };
}

function get(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = instanceOf(req, family);
  const body = recursionOf(req) >= 1 ? full(req, inst) : inst.render(req.ctx.opts.revision);
  return sync(body, inst.etag());
}

/**
 * POST /1.0/instances. What the daemon checks before its 202 (project, body, type, source, name)
 * is a sync error; what it finds while creating (invalid config or devices, a name taken) fails the
 * operation, with "Failed creating instance record: …". The instance appears at the operation's
 * database step, `createRecordMs` after the 202 for the share `createVisibilityDelay` of creates
 * and before the 202 for the others, so a GET right after the 202 answers 404 as often as on the
 * daemons (a refusal always comes after the 202). The later revision honours
 * `"start": true` (Incus's instance_create_start) within the same operation; LXD 5.0.2 ignores it.
 */
function create(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx, info } = req;
  const revision = ctx.opts.revision;
  if (!ctx.store.profiles.hasProject(info.project)) throw new SimHttpError(404, 'Failed loading project: Project not found');
  const body = bodyObject(req);
  // `lxc copy` sends "type": "" and means the source's type.
  const type = (body.type || family.type || 'container') as InstanceType;
  if (type !== 'container' && type !== 'virtual-machine') throw new SimHttpError(400, `Invalid instance type "${String(body.type)}"`);
  const source = (body.source ?? {}) as Record<string, unknown>;
  const sourceType = source.type || 'none';
  if (!['image', 'none', 'copy', 'migration'].includes(String(sourceType))) throw new SimHttpError(400, `Unknown source type ${String(sourceType)}`);
  const origin = sourceType === 'copy' ? copySource(req, source) : sourceType === 'image' ? imageSource(req, source) : undefined;
  const name = typeof body.name === 'string' && body.name !== '' ? body.name : `sim-${ctx.ids.secret(3)}`;
  ctx.store.checkName(name);
  const ownConfig = stringMap(body.config, 'config') ?? {};
  const ownDevices = deviceMap(body.devices) ?? {};
  const profiles = Array.isArray(body.profiles) ? body.profiles.map(String) : origin?.profiles;
  for (const p of profiles ?? []) ctx.store.profiles.profile(info.project, p);
  const startIt = revision === 'later' && body.start === true;
  const project = info.project;
  const location = ctx.cluster?.place(info.query.get('target') ?? undefined);
  const op = ctx.ops.create({
    description: 'Creating instance',
    project,
    location: location ?? 'none',
    resources: instanceResources(req, { name, type, project }),
  });
  op.running();
  const invalid = createError(revision, type, ownConfig, ownDevices);
  const taken = ctx.store.taken(project, name);
  const release = invalid || taken ? undefined : ctx.store.reserve(project, name);
  const databaseStep = (): void => {
    release?.();
    if (invalid) return op.fail(`Failed creating instance record: ${invalid}`);
    if (taken) return op.fail(daemonTexts.duplicateInstance(revision));
    const inst = ctx.store.add({
      name,
      project,
      type,
      config: { ...origin?.config, ...ownConfig },
      devices: { ...origin?.devices, ...ownDevices },
      profiles,
      ephemeral: body.ephemeral === true,
      description: typeof body.description === 'string' ? body.description : (origin?.description ?? ''),
      createdAt: ctx.ops.now(),
      baseImage: origin?.baseImage,
      target: location,
    });
    countCall(req, inst, 'create');
    if (origin?.copyOf) ctx.guests.copy(origin.copyOf.inst, origin.copyOf.snap, inst);
    // An instance made from a published image has the files the published instance had.
    else if (origin?.baseImage) ctx.guests.fromImage(origin.baseImage, inst);
    ctx.lifecycle.emit(inst, 'instance-created', { context: { 'storage-pool': 'default', type } });
    setTimeout(() => {
      op.progress({
        create_instance_from_image_unpack_progress: 'Unpack: 100% (800.00MB/s)',
        progress: { percent: '100', speed: '800000000', stage: 'create_instance_from_image_unpack' },
      });
      if (startIt) ctx.actions.startWithin(inst, op, info.requestor);
      else op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  };
  // A refusal always comes after the 202 (in the operation), as on both daemons.
  if (invalid || taken || delayedVisibility(op.id, ctx.opts.createVisibilityDelay)) setTimeout(databaseStep, ctx.opts.timings.createRecordMs).unref();
  else databaseStep();
  return asyncOp(op.url, ctx.ops.render(op));
}

/**
 * Whether a create's instance shows only from its database step: a draw of `share` from the
 * operation id (uniform, and repeated by a seeded simulator, without taking from its id sequence).
 */
function delayedVisibility(operationId: string, share: number): boolean {
  if (share >= 1) return true;
  if (share <= 0) return false;
  return Number.parseInt(operationId.replace(/-/g, '').slice(0, 8), 16) / 2 ** 32 < share;
}

/** The refusal of a creation's config or devices, as the daemon words it after "Failed creating instance record: ". */
function createError(
  revision: 'earlier' | 'later',
  type: InstanceType,
  config: Record<string, string>,
  devices: Record<string, Record<string, string>>,
): string | undefined {
  return configError(config, type, revision) ?? createDevicesError(devices, revision);
}

/** What a new instance inherits from its source. */
interface Origin {
  config: Record<string, string>;
  devices: Record<string, Record<string, string>>;
  profiles: string[] | undefined;
  description: string;
  baseImage: string | undefined;
  /** A copy's source, whose guest filesystem (or its snapshot's) the copy starts from. */
  copyOf?: { inst: SimInstance; snap: SimSnapshot | undefined };
}

/** `{"type":"copy","source":"NAME"}` or `"NAME/SNAP"`: local config (no volatile keys), devices, profiles. */
function copySource(req: SimRequest, source: Record<string, unknown>): Origin {
  const ref = String(source.source ?? '');
  const [instName, snapName] = ref.split('/', 2);
  const from = req.ctx.store.find(typeof source.project === 'string' && source.project ? source.project : req.info.project, instName ?? '');
  if (!from) throw new SimHttpError(404, 'Instance not found');
  const snap = snapName === undefined ? undefined : from.snapshots.get(snapName);
  if (snapName !== undefined && !snap) throw new SimHttpError(404, 'Instance snapshot not found');
  const config = Object.fromEntries(Object.entries(snap?.config ?? from.config).filter(([k]) => !k.startsWith('volatile.')));
  return {
    config,
    devices: structuredClone(snap?.devices ?? from.devices),
    profiles: [...(snap?.profiles ?? from.profiles)],
    description: from.description,
    baseImage: from.config['volatile.base_image'],
    copyOf: { inst: from, snap },
  };
}

/** `{"type":"image","alias":…}` or `{"fingerprint":…}`: the image's properties become `image.*` keys. */
function imageSource(req: SimRequest, source: Record<string, unknown>): Origin | undefined {
  let fingerprint = typeof source.fingerprint === 'string' ? source.fingerprint : '';
  if (!fingerprint && typeof source.alias === 'string' && source.alias !== '') fingerprint = req.ctx.aliases.get(source.alias).target;
  if (!fingerprint || (typeof source.server === 'string' && source.server !== '')) return undefined;
  const image = req.ctx.images.find(fingerprint);
  const props = image.properties as Record<string, string>;
  const config = Object.fromEntries(Object.entries(props).map(([k, v]) => [`image.${k}`, v]));
  return { config, devices: {}, profiles: undefined, description: '', baseImage: String(image.fingerprint) };
}

function put(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  const body = bodyObject(req);
  if (typeof body.restore === 'string') {
    countCall(req, inst, 'restore');
    // `lxc restore NAME SNAP` sends "NAME/SNAP"; the bare snapshot name works too.
    const snap = body.restore.startsWith(`${inst.name}/`) ? body.restore.slice(inst.name.length + 1) : body.restore;
    return restoreSnapshot(req, inst, snap);
  }
  checkIfMatch(req, inst.etag());
  countCall(req, inst, 'update');
  const config = stringMap(body.config, 'config') ?? {};
  const devices = deviceMap(body.devices) ?? {};
  const op = ctx.actions.runOperation(inst, { description: 'Updating instance', resources: instanceResources(req, inst) }, 'update', (op) => {
    const invalid = updateError(req, inst, config, devices);
    if (invalid) return op.fail(invalid);
    const dropsIdmap = Object.keys(inst.config).some((k) => k.startsWith('volatile.idmap.') && config[k] !== inst.config[k]);
    if (dropsIdmap) return op.fail("Volatile idmap keys can't be deleted by the user");
    inst.lock = 'update';
    setTimeout(() => {
      inst.lock = undefined;
      const volatile = Object.entries(inst.config).filter(([k]) => k.startsWith('volatile.'));
      inst.config = { ...Object.fromEntries(Object.entries(config).filter(([k]) => !k.startsWith('volatile.'))), ...Object.fromEntries(volatile) };
      inst.devices = devices;
      applyPlainFields(inst, body);
      inst.touch();
      ctx.lifecycle.emit(inst, 'instance-updated');
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

/**
 * The daemon's refusal of new config or devices ("Invalid config: …", "Invalid devices: …"), if
 * any, against LXD 5.0.2's key table or Incus 6.0.4's.
 */
function updateError(
  req: SimRequest,
  inst: SimInstance,
  config: Record<string, string>,
  devices: Record<string, Record<string, string>>,
): string | undefined {
  const configErr = configError(config, inst.type, req.ctx.opts.revision);
  if (configErr) return `Invalid config: ${configErr}`;
  const devicesErr = devicesError(devices);
  return devicesErr ? `Invalid devices: ${devicesErr}` : undefined;
}

/** The fields PUT and PATCH set the same way: profiles, description, ephemeral, architecture (an empty one is kept). */
function applyPlainFields(inst: SimInstance, body: Record<string, unknown>): void {
  if (Array.isArray(body.profiles)) inst.profiles = body.profiles.map(String);
  if (typeof body.description === 'string') inst.description = body.description;
  if (typeof body.ephemeral === 'boolean') inst.ephemeral = body.ephemeral;
  if (typeof body.architecture === 'string' && body.architecture !== '') inst.architecture = body.architecture;
}

function patch(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  const body = bodyObject(req);
  if (body.restore !== undefined) throw new SimHttpError(400, "Can't call PATCH in restore mode");
  checkIfMatch(req, inst.etag());
  if (inst.lock) throw new SimHttpError(409, `Instance is busy running a "${inst.lock}" operation`);
  countCall(req, inst, 'update');
  const config = stringMap(body.config, 'config');
  const devices = deviceMap(body.devices);
  const invalid = updateError(req, inst, Object.fromEntries(Object.entries(config ?? {}).filter(([, v]) => v !== '')), devices ?? {});
  // Both daemons answer an invalid PATCH with a 500 (observed).
  if (invalid) throw new SimHttpError(500, invalid);
  if (config) {
    for (const [k, v] of Object.entries(config)) {
      if (v === '') delete inst.config[k];
      else inst.config[k] = v;
    }
  }
  if (devices) inst.devices = { ...inst.devices, ...devices };
  applyPlainFields(inst, body);
  inst.touch();
  ctx.lifecycle.emit(inst, 'instance-updated');
  return sync({});
}

function remove(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  if (inst.isActive) throw new SimHttpError(400, 'Instance is running');
  countCall(req, inst, 'delete');
  const op = ctx.actions.runOperation(inst, { description: 'Deleting instance', resources: instanceResources(req, inst) }, 'delete', (op) => {
    inst.lock = 'delete';
    setTimeout(() => {
      for (const s of inst.snapshots.values()) ctx.lifecycle.emit(inst, 'instance-snapshot-deleted', { source: `${inst.url()}/snapshots/${s.name}` });
      ctx.store.remove(inst);
      ctx.actions.forget(inst);
      ctx.lifecycle.emit(inst, 'instance-deleted');
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

function rename(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  const body = bodyObject(req);
  const target = req.info.query.get('target');
  if (target && ctx.cluster) return migrate(req, inst, target);
  if (typeof body.name !== 'string' || body.name === '') throw new SimHttpError(400, 'Instance name cannot be empty');
  const newName = body.name;
  if (ctx.store.find(inst.project, newName)) throw new SimHttpError(409, `Name "${newName}" already in use`);
  countCall(req, inst, 'rename');
  const op = ctx.actions.runOperation(inst, { description: 'Renaming instance', resources: instanceResources(req, inst) }, 'rename', (op) => {
    if (inst.isActive) return op.fail(daemonTexts.renameRunning(ctx.opts.revision));
    const oldName = inst.name;
    setTimeout(() => {
      try {
        ctx.store.rename(inst, newName);
      } catch (err) {
        return op.fail((err as Error).message);
      }
      ctx.faults.rename(`${inst.project}/${oldName}`, `${inst.project}/${newName}`);
      ctx.lifecycle.emit(inst, 'instance-renamed', { context: { old_name: oldName } });
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

/**
 * POST …?target=MEMBER (`lxc move NAME --target MEMBER`, cluster mode): the instance keeps its name
 * and moves to the member; a running one is refused (no live migration of containers).
 */
function migrate(req: SimRequest, inst: SimInstance, target: string): SimResponse {
  const { ctx } = req;
  ctx.cluster!.get(target);
  if (inst.isActive) throw new SimHttpError(400, 'Instance must be stopped to be moved to another cluster member');
  countCall(req, inst, 'migrate');
  const op = ctx.actions.runOperation(inst, { description: 'Migrating instance', resources: instanceResources(req, inst) }, 'rename', (op) => {
    inst.lock = 'rename';
    setTimeout(() => {
      inst.lock = undefined;
      try {
        new ClusterActions(ctx).move(inst, target, req.info.requestor);
      } catch (err) {
        return op.fail((err as Error).message);
      }
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}
