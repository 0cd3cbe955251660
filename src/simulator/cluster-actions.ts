import { StatusCode } from '../client/status-code.js';
import type { SimContext } from './context.js';
import { SimHttpError } from './envelope.js';
import { operationResources } from './operation-resources.js';
import type { OperationClass } from './operations.js';
import type { SimMember } from './cluster.js';
import type { SimInstance } from './instance-model.js';
import { unixRequestor, type Requestor } from './lifecycle.js';

/** The cluster certificate's fingerprint, as member-to-member calls name it in `requestor.username`. */
const clusterFingerprint = '195dc299b1e69342b63710cb681f9113b9b87bc7e644bf89475825fbb385e420';

/**
 * What happens to members and to the instances on them in cluster mode: a member going down and
 * coming back, evacuation and restore, and moving an instance to another member. Used by the
 * /1.0/cluster handlers and by the controls; every method needs cluster mode.
 */
export class ClusterActions {
  constructor(private readonly ctx: SimContext) {}

  /**
   * The member stops answering: Offline, its instances list as Error 112 and refuse every call
   * (as LXD shows instances on a member it cannot reach). No event: the member is gone.
   */
  memberDown(name: string): void {
    const member = this.member(name);
    member.status = 'Offline';
    for (const inst of this.instancesOn(name)) this.setOffline(inst, true);
  }

  /** The member answers again: Online, its instances show their own status again. */
  memberUp(name: string): void {
    const member = this.member(name);
    member.status = 'Online';
    for (const inst of this.instancesOn(name)) this.setOffline(inst, false);
  }

  /**
   * Evacuates a member: it reads Evacuated at once, then each of its instances moves to the next
   * Online member (a running one is stopped, moved and started there) and remembers its origin in
   * `volatile.evacuate.origin`. As on LXD 5.0.2, the stop names no requestor (like a crash) and the
   * start names the cluster.
   */
  evacuate(name: string): void {
    const member = this.member(name);
    if (member.status !== 'Online') throw new SimHttpError(400, `Cluster member "${name}" is ${member.status.toLowerCase()}`);
    // Evacuated from the start, before the first stop (as LXD 5.0.2 reads it).
    member.status = 'Evacuated';
    for (const inst of this.instancesOn(name)) {
      const target = this.cluster.place();
      this.relocate(inst, target, { stop: undefined, start: this.clusterRequestor(target) });
      inst.config['volatile.evacuate.origin'] = name;
      inst.touch();
    }
  }

  /**
   * Brings an evacuated member back: Online, and the instances evacuated from it move home. As on
   * LXD 5.0.2, the stop names the cluster as requestor and the start on the home member none.
   */
  restore(name: string): void {
    const member = this.member(name);
    if (member.status !== 'Evacuated') throw new SimHttpError(400, `Cluster member "${name}" is not evacuated`);
    member.status = 'Online';
    for (const inst of this.ctx.store.list(null)) {
      if (inst.config['volatile.evacuate.origin'] !== name) continue;
      delete inst.config['volatile.evacuate.origin'];
      this.relocate(inst, name, { stop: this.clusterRequestor(inst.location), start: undefined });
    }
  }

  /**
   * Moves an instance to `target` (same name, same project): a running one is shut down on its
   * member, moved, and started on the target, both by `requestor` (the API refuses to move a
   * running container; the control does it, as `lxc move --stateless` would).
   */
  move(inst: SimInstance, target: string, requestor: Requestor = unixRequestor): void {
    if (inst.memberOffline) throw new SimHttpError(500, `Cluster member "${inst.location}" is offline`);
    if (inst.lock) throw new SimHttpError(409, `Instance is busy running a "${inst.lock}" operation`);
    const member = this.member(target);
    if (member.status !== 'Online') throw new SimHttpError(400, `Target cluster member "${target}" is ${member.status.toLowerCase()}`);
    if (target === inst.location) throw new SimHttpError(400, `Instance is already on cluster member "${target}"`);
    this.relocate(inst, target, { stop: requestor, start: requestor }, true);
  }

  /**
   * The move as LXD 5.0.2 sends it between members without shared storage: a running instance
   * shut down, then a copy created on the target as `lxd-move-of-<volatile.uuid>`, the instance
   * deleted on its member, the copy renamed to its name (none of the three names a requestor),
   * and the instance started again on the target. With `operations` (a move asked for, beside the
   * caller's own "Migrating instance" task), the operations LXD runs for it too, as recorded on the
   * real two-member cluster: the migration source's websocket "Migrating instance" on the old
   * member, "Creating instance" of the copy on the target, "Deleting instance" on the old member,
   * "Renaming instance" of the copy on the target, each around its event.
   */
  private relocate(inst: SimInstance, target: string, by: { stop: Requestor | undefined; start: Requestor | undefined }, operations = false): void {
    const wasActive = inst.isActive;
    const source = inst.location;
    if (wasActive) {
      this.ctx.actions.forget(inst);
      inst.statusCode = StatusCode.Stopped;
      inst.pid = 0;
      inst.config['volatile.last_state.power'] = 'STOPPED';
      inst.touch();
      this.ctx.lifecycle.emit(inst, 'instance-shutdown', { requestor: by.stop });
    }
    const copy = `lxd-move-of-${inst.config['volatile.uuid'] ?? this.ctx.ids.uuid()}`;
    const step = (description: string, location: string, name: string, kind: OperationClass = 'task') =>
      operations
        ? this.ctx.ops
            .create({
              description,
              class: kind,
              project: inst.project,
              location,
              resources: operationResources(this.ctx.opts.revision, { name, type: inst.type, project: inst.project }),
              mayCancel: kind === 'websocket',
            })
            .running()
        : undefined;
    const migration = step('Migrating instance', source, inst.name, 'websocket');
    const creating = step('Creating instance', target, copy);
    this.ctx.lifecycle.emit(inst, 'instance-created', { name: copy, location: target, context: { 'storage-pool': 'default', type: inst.type } });
    creating?.succeed();
    const deleting = step('Deleting instance', source, inst.name);
    this.ctx.lifecycle.emit(inst, 'instance-deleted', { location: source });
    migration?.succeed();
    deleting?.succeed();
    inst.location = target;
    inst.touch();
    const renaming = step('Renaming instance', target, copy);
    this.ctx.lifecycle.emit(inst, 'instance-renamed', { context: { old_name: copy } });
    renaming?.succeed();
    if (wasActive) {
      this.ctx.actions.markRunning(inst, true);
      inst.statusCode = StatusCode.Running;
      inst.touch();
      this.ctx.lifecycle.emit(inst, 'instance-started', { requestor: by.start });
    }
  }

  /** The requestor of a call a member makes on the cluster's behalf: the cluster certificate, from the member's address (an ephemeral port). */
  private clusterRequestor(member: string): Requestor {
    const host = new URL(this.member(member).url).hostname;
    return { username: clusterFingerprint, protocol: 'cluster', address: `${host}:55896` };
  }

  private setOffline(inst: SimInstance, offline: boolean): void {
    inst.memberOffline = offline;
    inst.touch();
  }

  private instancesOn(member: string): SimInstance[] {
    return this.ctx.store.list(null).filter((i) => i.location === member);
  }

  private member(name: string): SimMember {
    return this.cluster.get(name);
  }

  private get cluster(): NonNullable<SimContext['cluster']> {
    if (!this.ctx.cluster) throw new SimHttpError(400, 'The simulator is not in cluster mode');
    return this.ctx.cluster;
  }
}
