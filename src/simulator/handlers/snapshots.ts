import { StatusCode } from '../../client/status-code.js';
import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimInstance, SimSnapshot } from '../instance-model.js';
import { daemonTexts } from '../daemon-texts.js';
import type { Router, SimRequest } from '../router.js';
import { zeroTime } from '../time.js';
import { bodyObject, countCall, familiesFor, instanceOf, instanceResources, recursionOf, type InstanceFamily } from './common.js';

/** Routes of …/snapshots and …/snapshots/<snap>. */
export function registerSnapshots(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const base = `/1.0/${family.prefix}/:name/snapshots`;
    router.on('GET', base, (req) => list(req, family));
    router.on('POST', base, (req) => create(req, family));
    router.on('GET', `${base}/:snap`, (req) => get(req, family));
    router.on('POST', `${base}/:snap`, (req) => rename(req, family));
    router.on('PATCH', `${base}/:snap`, (req) => update(req, family));
    router.on('PUT', `${base}/:snap`, (req) => update(req, family));
    router.on('DELETE', `${base}/:snap`, (req) => remove(req, family));
  }
}

function snapshotOf(req: SimRequest, inst: SimInstance): SimSnapshot {
  const snap = inst.snapshots.get(req.params.snap!);
  if (!snap) throw new SimHttpError(404, daemonTexts.snapshotNotFound(req.ctx.opts.revision, inst.project, inst.name, req.params.snap!));
  return snap;
}

/** The instance of a `…/snapshots/<snap>` route: Incus names a missing one with the snapshot (`c1/s1`), LXD 5.0.2 does not. */
function snapshotInstanceOf(req: SimRequest, family: InstanceFamily): SimInstance {
  const { project } = req.info;
  if (req.ctx.opts.revision === 'later' && !req.ctx.store.find(project, req.params.name!))
    throw new SimHttpError(404, daemonTexts.instanceNotFound('later', project, `${req.params.name}/${req.params.snap}`));
  return instanceOf(req, family);
}

function list(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = instanceOf(req, family);
  const snaps = [...inst.snapshots.values()];
  if (recursionOf(req) === 0) return sync(snaps.map((s) => `/1.0/${family.prefix}/${inst.name}/snapshots/${s.name}`));
  return sync(snaps.map((s) => inst.renderSnapshot(s)));
}

function get(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = snapshotInstanceOf(req, family);
  const snap = snapshotOf(req, inst);
  return sync(inst.renderSnapshot(snap), `"${snap.createdAt}"`);
}

/**
 * Snapshot of a running instance on `dir` freezes it for the copy: `instance-snapshot-created`
 * (no requestor), then `instance-paused` and `instance-resumed` (with requestor), then Success.
 */
function create(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  const body = req.body === undefined ? {} : bodyObject(req);
  let name = typeof body.name === 'string' && body.name !== '' ? body.name : '';
  if (name === '') for (let i = 0; name === '' || inst.snapshots.has(name); i++) name = `snap${i}`;
  if (name.includes('/')) throw new SimHttpError(400, 'Snapshot names may not contain slashes');
  const expiresAt = typeof body.expires_at === 'string' ? body.expires_at : zeroTime;
  countCall(req, inst, 'snapshot');
  const op = ctx.actions.runOperation(inst, { description: 'Snapshotting instance', resources: instanceResources(req, inst) }, undefined, (op) => {
    if (inst.snapshots.has(name)) return op.fail(daemonTexts.duplicateSnapshot(ctx.opts.revision, name));
    if (body.stateful === true) return op.fail("Unable to create a stateful snapshot. CRIU isn't installed");
    setTimeout(() => {
      const snap: SimSnapshot = {
        name,
        createdAt: ctx.ops.now(),
        expiresAt,
        stateful: false,
        config: { ...inst.config },
        devices: structuredClone(inst.devices),
        profiles: [...inst.profiles],
      };
      inst.snapshots.set(name, snap);
      ctx.guests.snapshot(inst, snap);
      inst.touch();
      ctx.lifecycle.emit(inst, 'instance-snapshot-created', { source: `${inst.url()}/snapshots/${name}` });
      if (inst.statusCode === StatusCode.Running || inst.statusCode === StatusCode.Ready) {
        ctx.lifecycle.emit(inst, 'instance-paused', { requestor: req.info.requestor });
        ctx.lifecycle.emit(inst, 'instance-resumed', { requestor: req.info.requestor });
      }
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

function rename(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = snapshotInstanceOf(req, family);
  const snap = snapshotOf(req, inst);
  const body = bodyObject(req);
  if (typeof body.name !== 'string' || body.name === '') throw new SimHttpError(400, 'A snapshot name must be provided');
  const newName = body.name;
  countCall(req, inst, 'snapshot-rename');
  const op = ctx.actions.runOperation(inst, { description: 'Renaming snapshot', resources: instanceResources(req, inst) }, undefined, (op) => {
    if (inst.snapshots.has(newName)) return op.fail(`Name "${newName}" already in use`);
    setTimeout(() => {
      inst.snapshots.delete(snap.name);
      const oldName = snap.name;
      snap.name = newName;
      inst.snapshots.set(newName, snap);
      ctx.lifecycle.emit(inst, 'instance-snapshot-renamed', {
        source: `${inst.url()}/snapshots/${newName}`,
        context: { old_name: `${inst.name}/${oldName}` },
      });
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

/** PATCH/PUT can change only expires_at; no lifecycle event (LXD runs it with userRequested=false). */
function update(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = snapshotInstanceOf(req, family);
  const snap = snapshotOf(req, inst);
  const body = bodyObject(req);
  countCall(req, inst, 'snapshot-update');
  // LXD lists the snapshot as if it were an instance (/1.0/instances/<snap>): a daemon bug kept on purpose.
  const resources = instanceResources(req, { ...inst, name: snap.name } as SimInstance);
  const op = ctx.actions.runOperation(inst, { description: 'Updating snapshot', resources }, undefined, (op) => {
    setTimeout(() => {
      if (typeof body.expires_at === 'string') snap.expiresAt = body.expires_at;
      op.succeed();
    }, ctx.opts.timings.taskMs).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}

function remove(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = snapshotInstanceOf(req, family);
  const snap = snapshotOf(req, inst);
  countCall(req, inst, 'snapshot-delete');
  const op = ctx.actions.runOperation(
    inst,
    { description: 'Deleting snapshot', resources: instanceResources(req, inst, `/${snap.name}`) },
    undefined,
    (op) => {
      setTimeout(() => {
        inst.snapshots.delete(snap.name);
        inst.touch();
        ctx.lifecycle.emit(inst, 'instance-snapshot-deleted', { source: `${inst.url()}/snapshots/${snap.name}` });
        op.succeed();
      }, ctx.opts.timings.taskMs).unref();
    },
  );
  return asyncOp(op.url, ctx.ops.render(op));
}

/**
 * PUT /1.0/instances/<n> {"restore": "s1"}: `instance-restored` with the snapshot in context, then,
 * for a running instance, `instance-started` — both without requestor, as observed. A missing
 * snapshot fails the operation ("Snapshot <n>/<s> does not exist"), except on a stopped instance of
 * the earlier revision, which LXD 5.0.2 answers with a sync 404 "Instance not found" (observed).
 */
export function restoreSnapshot(req: SimRequest, inst: SimInstance, snapName: string): SimResponse {
  const { ctx } = req;
  const snap = inst.snapshots.get(snapName);
  if (!snap && ctx.opts.revision === 'earlier' && !inst.isActive) throw new SimHttpError(404, 'Instance not found');
  const op = ctx.actions.runOperation(inst, { description: 'Restoring snapshot', resources: instanceResources(req, inst) }, 'restore', (op) => {
    if (!snap) return op.fail(daemonTexts.restoreMissing(inst.name, snapName));
    const wasRunning = inst.isActive;
    inst.lock = 'restore';
    if (wasRunning) {
      inst.statusCode = StatusCode.Stopping;
      inst.touch();
    }
    setTimeout(
      () => {
        inst.lock = undefined;
        const volatile = Object.entries(inst.config).filter(([k]) => k.startsWith('volatile.'));
        inst.config = {
          ...Object.fromEntries(Object.entries(snap.config).filter(([k]) => !k.startsWith('volatile.'))),
          ...Object.fromEntries(volatile),
        };
        inst.devices = structuredClone(snap.devices);
        inst.profiles = [...snap.profiles];
        ctx.guests.restore(inst, snap);
        if (wasRunning) {
          inst.statusCode = StatusCode.Running;
          ctx.actions.markRunning(inst, true);
        }
        inst.touch();
        ctx.lifecycle.emit(inst, 'instance-restored', { context: { snapshot: `${inst.name}/${snap.name}` } });
        if (wasRunning) ctx.lifecycle.emit(inst, 'instance-started');
        op.succeed();
      },
      wasRunning ? ctx.opts.timings.restartMs : ctx.opts.timings.taskMs,
    ).unref();
  });
  return asyncOp(op.url, ctx.ops.render(op));
}
