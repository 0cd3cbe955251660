import { StatusCode } from '../client/status-code.js';
import type { FaultBook, OperationFault } from './faults.js';
import type { IdSource } from './ids.js';
import type { Guests } from './guest/guests.js';
import { instanceKey, type LockAction, type SimInstance } from './instance-model.js';
import type { InstanceStore } from './instance-store.js';
import type { LifecycleEmitter, Requestor } from './lifecycle.js';
import type { OperationRegistry, OperationSpec, SimOperation } from './operations.js';
import { operationResources } from './operation-resources.js';
import type { ResolvedSimOptions } from './options.js';
import { busyDecision } from './busy-policy.js';
import { planTransition, type StateLifecycle, type StateRequest } from './state-machine.js';

const descriptions: Record<string, string> = {
  start: 'Starting instance',
  stop: 'Stopping instance',
  restart: 'Restarting instance',
  freeze: 'Freezing instance',
  unfreeze: 'Unfreezing instance',
};

/** Text of a failed start, shaped like LXD's forkstart failure. */
export const failedStartError = (name: string): string =>
  `Failed to run: /usr/bin/lxd forkstart ${name} /var/lib/lxd/containers /var/log/lxd/${name}/lxc.conf: exit status 1`;

/**
 * The parts of the simulator that {@link InstanceActions} reads and drives; the simulator's
 * SimContext, which holds the actions in turn, is passed as it is.
 */
interface ActionScope {
  opts: ResolvedSimOptions;
  ids: IdSource;
  store: InstanceStore;
  ops: OperationRegistry;
  lifecycle: LifecycleEmitter;
  faults: FaultBook;
  /** The guests' commands: what they left running ends with the guest's run. */
  guests: Pick<Guests, 'ended'>;
}

/**
 * Drives state changes of instances over time: the operation's status sequence
 * (Pending 105 → Running 103 → Success 200 / Failure 400), the instance's transitional and final
 * status, the lifecycle event with or without requestor, the operation lock ("busy running a …
 * operation") and the armed faults. Timers are unref'd so an idle simulator never holds the process.
 */
export class InstanceActions {
  private readonly crashTimers = new Map<SimInstance, NodeJS.Timeout>();

  constructor(private readonly ctx: ActionScope) {}

  /**
   * Starts an operation on an instance: consumes an armed fail/hang fault, refuses when the
   * instance is busy, otherwise runs `body` with the started operation.
   */
  runOperation(
    inst: SimInstance,
    spec: OperationSpec,
    lockAction: LockAction | undefined,
    body: (op: SimOperation) => void,
    onBusy?: (op: SimOperation) => boolean,
  ): SimOperation {
    const fault: OperationFault = this.ctx.faults.takeOperationFault(instanceKey(inst.project, inst.name));
    const hang = fault?.kind === 'hang';
    const op = this.ctx.ops.create({
      project: inst.project,
      location: inst.location,
      ...spec,
      mayCancel: hang || spec.mayCancel === true,
      onCancel: hang
        ? () => {
            if (inst.lock === lockAction) inst.lock = undefined;
          }
        : spec.onCancel,
    });
    op.running();
    // The daemon answers 202 with the operation Running and only then finds out whether the work
    // can be done: refusals (busy, already running, …) show in the operation, never in the 202.
    setImmediate(() => {
      if (fault?.kind === 'fail') return op.fail(fault.err);
      if (lockAction && inst.lock) {
        if (onBusy?.(op)) return;
        return op.fail(`Failed to create instance ${lockAction} operation: Instance is busy running a "${inst.lock}" operation`);
      }
      if (hang) {
        if (lockAction) inst.lock = lockAction;
        return;
      }
      body(op);
    });
    return op;
  }

  /** PUT …/state: one of start, stop, restart, freeze, unfreeze. */
  changeState(inst: SimInstance, req: StateRequest, requestor: Requestor): SimOperation {
    const spec: OperationSpec = { description: descriptions[req.action]!, resources: operationResources(this.ctx.opts.revision, inst) };
    const statusAtRequest = inst.statusCode;
    const run = (op: SimOperation): void => {
      if (inst.lock) {
        if (!this.whenBusy(inst, req, requestor, op, statusAtRequest))
          op.fail(`Failed to create instance ${req.action} operation: Instance is busy running a "${inst.lock}" operation`);
        return;
      }
      this.transition(inst, req, requestor, op);
    };
    return this.runOperation(inst, spec, req.action, run, (op) => this.whenBusy(inst, req, requestor, op, statusAtRequest));
  }

  /** Starts a just-created instance within its create operation (Incus's `"start": true`), which ends when it runs. */
  startWithin(inst: SimInstance, op: SimOperation, requestor: Requestor): void {
    this.transition(inst, { action: 'start', force: false, timeout: -1 }, requestor, op);
  }

  /** Applies {@link busyDecision}; false when the request is simply refused. */
  private whenBusy(inst: SimInstance, req: StateRequest, requestor: Requestor, op: SimOperation, statusAtRequest: StatusCode): boolean {
    const decision = busyDecision(inst.lockHolder, req, statusAtRequest, this.ctx.opts.revision);
    if (!decision) return false;
    if (decision.kind === 'fail') {
      op.fail(decision.err);
      return true;
    }
    inst.whenUnlocked(() => {
      switch (decision.kind) {
        case 'join':
          if (decision.emit) this.ctx.lifecycle.emit(inst, decision.emit, { requestor });
          return op.succeed();
        case 'wait-then-fail':
          return op.fail(decision.err);
        case 'wait-then-restart':
          this.ctx.lifecycle.emit(inst, 'instance-shutdown', { requestor });
          return this.transition(inst, { ...req, action: 'start' }, requestor, op, 'instance-restarted');
      }
    });
    return true;
  }

  /** Runs an accepted state change; `announce` replaces the lifecycle action it emits. */
  private transition(inst: SimInstance, req: StateRequest, requestor: Requestor, op: SimOperation, announce?: StateLifecycle): void {
    const result = planTransition(inst.statusCode, req);
    if (!result.ok) return op.fail(result.err);
    const plan = result.plan;
    const key = instanceKey(inst.project, inst.name);
    const faults = this.ctx.faults.of(key);
    const t = this.ctx.opts.timings;
    if (plan.lifecycle === 'instance-shutdown' && faults.ignoreShutdown) {
      inst.lock = 'stop';
      inst.lockHolder = { action: 'stop', force: false };
      if (req.timeout > 0) {
        this.later(req.timeout * 1000, () => {
          inst.lock = undefined;
          op.fail(`Failed shutting down instance, status is "Running": shutting down the container`);
        });
      }
      return;
    }
    inst.lock = plan.lock;
    inst.lockHolder = { action: plan.lock, force: req.force || req.timeout === 0 };
    const previous = inst.statusCode;
    if (plan.before) this.ctx.lifecycle.emit(inst, plan.before, { requestor });
    inst.statusCode = plan.during;
    inst.touch();
    if (plan.lifecycle === 'instance-started' && faults.failNextStart) {
      delete faults.failNextStart;
      this.later(t.failedStartMs, () => this.failStart(inst, op, previous));
      return;
    }
    if (plan.lifecycle === 'instance-restarted') {
      this.later(t.restartMs / 2, () => {
        if (inst.statusCode === StatusCode.Stopping) {
          inst.statusCode = StatusCode.Starting;
          inst.touch();
        }
      });
    }
    let lasts = t[plan.timing];
    if (plan.lifecycle === 'instance-started' && faults.slowNextStart !== undefined) {
      lasts = faults.slowNextStart;
      delete faults.slowNextStart;
    }
    this.later(lasts, () => {
      inst.lock = undefined;
      if (plan.after === StatusCode.Stopped) this.markStopped(inst);
      else this.markRunning(inst, plan.lifecycle !== 'instance-paused' && plan.lifecycle !== 'instance-resumed');
      inst.statusCode = plan.after;
      inst.touch();
      this.ctx.lifecycle.emit(inst, announce ?? plan.lifecycle, { requestor });
      op.succeed();
      if (plan.after === StatusCode.Stopped) this.afterStop(inst);
      if (plan.lifecycle === 'instance-started' || plan.lifecycle === 'instance-restarted') this.armCrashLoop(inst);
    });
  }

  /**
   * The guest exits without a request (kill -9, crash, poweroff): /state reads Stopped at once, the
   * instance stays busy with "stop" while the stop hook runs, then `instance-shutdown` without requestor.
   */
  crash(inst: SimInstance): void {
    if (!inst.isActive) return;
    this.clearCrashTimer(inst);
    inst.statusCode = StatusCode.Stopped;
    inst.pid = 0;
    inst.lock = 'stop';
    inst.touch();
    this.later(this.ctx.opts.timings.stopHookMs, () => {
      if (inst.lock === 'stop') inst.lock = undefined;
      this.markStopped(inst);
      this.ctx.lifecycle.emit(inst, 'instance-shutdown');
      this.afterStop(inst);
    });
  }

  /** Puts an instance in Error 112 without any event (LXD emits none). */
  setError(inst: SimInstance): void {
    this.clearCrashTimer(inst);
    inst.statusCode = StatusCode.Error;
    inst.touch();
  }

  /** The guest reports readiness (later revision only): Ready 113 and `instance-ready`. */
  setReady(inst: SimInstance): void {
    inst.statusCode = StatusCode.Ready;
    inst.touch();
    this.ctx.lifecycle.emit(inst, 'instance-ready');
  }

  /** Cancels timers tied to an instance (it is being deleted). */
  forget(inst: SimInstance): void {
    this.clearCrashTimer(inst);
    this.ctx.guests.ended(inst);
  }

  /** Runs `fn` after `ms`, unref'd. */
  later(ms: number, fn: () => void): void {
    setTimeout(fn, Math.max(0, ms)).unref();
  }

  /** Marks a started guest: new pid, power state RUNNING, last use now. */
  markRunning(inst: SimInstance, newPid: boolean): void {
    if (newPid || inst.pid === 0) {
      // A new run of the guest: what the last one left running is gone.
      this.ctx.guests.ended(inst);
      inst.pid = 1000 + Math.floor(this.ctx.ids.float() * 4_000_000);
      inst.startedAt = this.ctx.ops.now();
    }
    // The first start applies the idmap and the create template, as LXD does.
    inst.config['volatile.idmap.current'] ??= inst.config['volatile.idmap.next'] ?? '[]';
    // Incus 6.0 leaves the last state's idmap empty (`[]`) on the test bed (its idmapped mounts shift nothing on disk).
    if (this.ctx.opts.revision !== 'later') inst.config['volatile.last_state.idmap'] = inst.config['volatile.idmap.current'];
    delete inst.config['volatile.apply_template'];
    inst.config['volatile.last_state.power'] = 'RUNNING';
    inst.lastUsedAt = this.ctx.ops.now();
    inst.touch();
  }

  private markStopped(inst: SimInstance): void {
    this.ctx.guests.ended(inst);
    inst.pid = 0;
    inst.config['volatile.last_state.power'] = 'STOPPED';
    inst.touch();
  }

  private failStart(inst: SimInstance, op: SimOperation, previous: StatusCode): void {
    inst.statusCode = previous === StatusCode.Starting ? StatusCode.Stopped : previous;
    inst.lock = 'stop';
    inst.touch();
    op.fail(failedStartError(inst.name));
    // LXD's stop hook runs after the failed start and reports a spurious shutdown without requestor.
    this.later(this.ctx.opts.timings.stopHookMs, () => {
      if (inst.lock === 'stop') inst.lock = undefined;
      this.markStopped(inst);
      this.ctx.lifecycle.emit(inst, 'instance-shutdown');
    });
  }

  private afterStop(inst: SimInstance): void {
    this.clearCrashTimer(inst);
    if (inst.ephemeral && this.ctx.store.find(inst.project, inst.name) === inst) {
      this.ctx.store.remove(inst);
      this.ctx.lifecycle.emit(inst, 'instance-deleted');
    }
  }

  private armCrashLoop(inst: SimInstance): void {
    const loop = this.ctx.faults.of(instanceKey(inst.project, inst.name)).crashLoop;
    if (!loop) return;
    this.clearCrashTimer(inst);
    const timer = setTimeout(() => {
      this.crashTimers.delete(inst);
      this.crash(inst);
    }, loop.uptimeMs).unref();
    this.crashTimers.set(inst, timer);
  }

  private clearCrashTimer(inst: SimInstance): void {
    const t = this.crashTimers.get(inst);
    if (t) clearTimeout(t);
    this.crashTimers.delete(inst);
  }
}
