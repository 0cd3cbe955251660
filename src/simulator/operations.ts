import { StatusCode, statusText, type ApiRevision } from '../client/status-code.js';
import { SimHttpError } from './envelope.js';
import type { EventHub } from './event-hub.js';
import type { IdSource } from './ids.js';
import { timestampNow, type UtcSuffix } from './time.js';

/** Operation classes (seed §2.3). */
export type OperationClass = 'task' | 'websocket' | 'token';

/** What creating an operation needs. */
export interface OperationSpec {
  description: string;
  class?: OperationClass;
  project?: string;
  /** Cluster member running it (cluster mode); the answering server when absent. */
  location?: string;
  /** Resource-type name → URL paths (seed §2.3); null for an operation the daemon creates without any (an image upload). Default: none, `{}`. */
  resources?: Record<string, string[]> | null;
  metadata?: Record<string, unknown> | null;
  mayCancel?: boolean;
  /** Called when a DELETE cancels the operation, before it turns 401. */
  onCancel?: () => void;
}

/** A live operation. Its owner drives it with running/progress/succeed/fail. */
export class SimOperation {
  readonly id: string;
  readonly class: OperationClass;
  readonly description: string;
  readonly project: string;
  readonly location: string | undefined;
  readonly createdAt: string;
  updatedAt: string;
  statusCode: StatusCode = StatusCode.Pending;
  resources: Record<string, string[]> | null;
  metadata: Record<string, unknown> | null;
  mayCancel: boolean;
  err = '';
  onCancel: (() => void) | undefined;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly registry: OperationRegistry,
    id: string,
    spec: OperationSpec,
  ) {
    this.id = id;
    this.class = spec.class ?? 'task';
    this.description = spec.description;
    this.project = spec.project ?? 'default';
    this.location = spec.location;
    this.resources = spec.resources === undefined ? {} : spec.resources;
    this.metadata = spec.metadata ?? null;
    this.mayCancel = spec.mayCancel ?? false;
    this.onCancel = spec.onCancel;
    this.createdAt = registry.now();
    this.updatedAt = this.createdAt;
  }

  /** URL path of the operation. */
  get url(): string {
    return `/1.0/operations/${this.id}`;
  }

  /** True once Success, Failure or Cancelled. */
  get done(): boolean {
    return this.statusCode === StatusCode.Success || this.statusCode === StatusCode.Failure || this.statusCode === StatusCode.Cancelled;
  }

  /** Pending → Running (LXD emits both, back to back, when an operation starts). */
  running(): this {
    return this.transition(StatusCode.Running);
  }

  /** A Running update carrying progress metadata. */
  progress(metadata: Record<string, unknown>): this {
    if (this.done) return this;
    this.metadata = { ...(this.metadata ?? {}), ...metadata };
    this.updatedAt = this.registry.now();
    this.registry.emit(this);
    return this;
  }

  /** Ends in Success 200. */
  succeed(metadata?: Record<string, unknown>): void {
    if (metadata) this.metadata = { ...(this.metadata ?? {}), ...metadata };
    this.finish(StatusCode.Success, '');
  }

  /** Ends in Failure 400 with `err` (and extra metadata, e.g. an exec's return code). */
  fail(err: string, metadata?: Record<string, unknown>): void {
    if (metadata) this.metadata = { ...(this.metadata ?? {}), ...metadata };
    this.finish(StatusCode.Failure, err);
  }

  /** Cancelling 104, the cancel hook, then Cancelled 401. */
  cancel(): void {
    this.transition(StatusCode.Cancelling);
    this.onCancel?.();
    this.finish(StatusCode.Cancelled, '');
  }

  /** Resolves when the operation is done or after `timeoutMs` (negative: no limit). */
  wait(timeoutMs: number): Promise<void> {
    if (this.done) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      this.waiters.push(done);
      if (timeoutMs >= 0) timer = setTimeout(done, timeoutMs);
    });
  }

  /** The operation object (seed §2.3) in LXD's field order. */
  render(revision: ApiRevision): Record<string, unknown> {
    return {
      id: this.id,
      class: this.class,
      description: this.description,
      created_at: this.createdAt,
      updated_at: this.updatedAt,
      status: statusText(this.statusCode, revision),
      status_code: this.statusCode,
      resources: this.resources,
      metadata: this.metadata,
      may_cancel: this.mayCancel,
      err: this.err,
      location: this.location ?? this.registry.serverName,
    };
  }

  private transition(code: StatusCode): this {
    if (this.done) return this;
    this.statusCode = code;
    this.updatedAt = this.registry.now();
    this.registry.emit(this);
    return this;
  }

  private finish(code: StatusCode, err: string): void {
    if (this.done) return;
    this.err = err;
    this.mayCancel = false;
    this.transition(code);
    for (const w of this.waiters.splice(0)) w();
    this.registry.retire(this);
  }
}

/**
 * Every operation of the simulator: creation (Pending 105, announced on the events socket),
 * lookup, listing grouped by lowercase status, long-poll wait, cancellation and removal a fixed
 * time after completion, like LXD's `done()`.
 */
export class OperationRegistry {
  private readonly ops = new Map<string, SimOperation>();

  constructor(
    private readonly hub: EventHub,
    private readonly ids: IdSource,
    private readonly revision: ApiRevision,
    private readonly utcSuffix: UtcSuffix,
    private readonly retentionMs: number,
    /** @internal `location` of operations not tied to a member: "none", or the answering cluster member. */
    readonly serverName = 'none',
  ) {}

  /** Creates an operation in Pending 105 and announces it. */
  create(spec: OperationSpec): SimOperation {
    const op = new SimOperation(this, this.ids.uuid(), spec);
    this.ops.set(op.id, op);
    this.emit(op);
    return op;
  }

  /** The operation with this id, or a 404 "Operation not found". */
  get(id: string): SimOperation {
    const op = this.ops.get(id);
    if (!op) throw new SimHttpError(404, 'Operation not found');
    return op;
  }

  /** Operations of a project (null: all), newest last. */
  list(project: string | null): SimOperation[] {
    return [...this.ops.values()].filter((op) => project === null || op.project === project);
  }

  /** Cancels an operation, or 400 when it may not be cancelled. */
  cancel(id: string): void {
    const op = this.get(id);
    if (!op.mayCancel) throw new SimHttpError(400, "This operation can't be cancelled");
    op.cancel();
  }

  /** Forgets every operation (daemon restart: old ids answer 404). */
  clear(): void {
    this.ops.clear();
  }

  /** Renders an operation in the registry's revision. */
  render(op: SimOperation): Record<string, unknown> {
    return op.render(this.revision);
  }

  /** @internal Timestamp in the configured format. */
  now(): string {
    return timestampNow(this.utcSuffix);
  }

  /** @internal Publishes the current state of an operation. */
  emit(op: SimOperation): void {
    this.hub.publish('operation', op.render(this.revision), op.project, op.location);
  }

  /** @internal Schedules removal of a finished operation. */
  retire(op: SimOperation): void {
    setTimeout(() => {
      if (this.ops.get(op.id) === op) this.ops.delete(op.id);
    }, this.retentionMs).unref();
  }
}
