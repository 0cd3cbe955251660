import { StatusCode } from '../client/status-code.js';
import type { SimContext } from './context.js';
import { SimHttpError } from './envelope.js';
import type { SimMember } from './cluster.js';
import type { SimInstance } from './instance-model.js';
import { unixRequestor, type Requestor } from './lifecycle.js';

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
   * Evacuates a member: each of its instances moves to the next Online member (a running one is
   * stopped, moved and started there) and remembers its origin in `volatile.evacuate.origin`;
   * then the member is Evacuated.
   */
  evacuate(name: string, requestor: Requestor = unixRequestor): void {
    const member = this.member(name);
    if (member.status !== 'Online') throw new SimHttpError(400, `Cluster member "${name}" is ${member.status.toLowerCase()}`);
    member.status = 'Evacuated';
    for (const inst of this.instancesOn(name)) {
      const target = this.cluster.place();
      this.relocate(inst, target, requestor);
      inst.config['volatile.evacuate.origin'] = name;
      inst.touch();
    }
  }

  /** Brings an evacuated member back: Online, and the instances evacuated from it move home. */
  restore(name: string, requestor: Requestor = unixRequestor): void {
    const member = this.member(name);
    if (member.status !== 'Evacuated') throw new SimHttpError(400, `Cluster member "${name}" is not evacuated`);
    member.status = 'Online';
    for (const inst of this.ctx.store.list(null)) {
      if (inst.config['volatile.evacuate.origin'] !== name) continue;
      delete inst.config['volatile.evacuate.origin'];
      this.relocate(inst, name, requestor);
    }
  }

  /**
   * Moves an instance to `target` (same name, same project): a running one is shut down on its
   * member, moved, and started on the target; `instance-migrated` comes from the target.
   */
  move(inst: SimInstance, target: string, requestor: Requestor = unixRequestor): void {
    if (inst.memberOffline) throw new SimHttpError(500, `Cluster member "${inst.location}" is offline`);
    if (inst.lock) throw new SimHttpError(409, `Instance is busy running a "${inst.lock}" operation`);
    const member = this.member(target);
    if (member.status !== 'Online') throw new SimHttpError(400, `Target cluster member "${target}" is ${member.status.toLowerCase()}`);
    if (target === inst.location) throw new SimHttpError(400, `Instance is already on cluster member "${target}"`);
    this.relocate(inst, target, requestor);
  }

  private relocate(inst: SimInstance, target: string, requestor: Requestor): void {
    const wasActive = inst.isActive;
    if (wasActive) {
      this.ctx.actions.forget(inst);
      inst.statusCode = StatusCode.Stopped;
      inst.pid = 0;
      inst.config['volatile.last_state.power'] = 'STOPPED';
      inst.touch();
      this.ctx.lifecycle.emit(inst, 'instance-shutdown', { requestor });
    }
    inst.location = target;
    inst.touch();
    this.ctx.lifecycle.emit(inst, 'instance-migrated', { requestor });
    if (wasActive) {
      this.ctx.actions.markRunning(inst, true);
      inst.statusCode = StatusCode.Running;
      inst.touch();
      this.ctx.lifecycle.emit(inst, 'instance-started', { requestor });
    }
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
