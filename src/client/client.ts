import type { OperationObject } from './envelope.js';
import { eventsEndpoint, type EventType, type EventsEndpoint } from './events.js';
import { startExec, type ExecOptions, type ExecRequest, type ExecSession } from './exec.js';
import type { Instance, InstanceFull, InstanceState, Snapshot, StateChange, Versioned } from './instance.js';
import * as instances from './instances.js';
import type { InstanceCreate, ListOptions, UpdateOptions } from './instances.js';
import { OperationFeed } from './operation-feed.js';
import { Operation } from './operation.js';
import * as operations from './operations.js';
import { Scope } from './scope.js';
import { listClusterMembers, type ClusterMember } from './cluster.js';
import { getApiVersions, getServer, type ServerInfo } from './server.js';
import * as snapshots from './snapshots.js';
import type { SnapshotCreate } from './snapshots.js';
import type { Target } from './target.js';
import { Transport, type RequestOptions, type TransportOptions } from './transport.js';

export type { EventsEndpoint } from './events.js';
export { OperationFeed } from './operation-feed.js';

/** Options of {@link InstanceClient}. */
export interface ClientOptions {
  /** Project to scope calls to. Default: the target's project, else the server's default project. */
  project?: string;
  /** Per-call timeout in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Told when a cluster target moves to its next address (see {@link TransportOptions.onFailover}). */
  onFailover?: TransportOptions['onFailover'];
  /**
   * Wait for operations through operation events subscribed before each request, instead of
   * long-polling: `true` opens the client's own `/1.0/events?type=operation` socket; an
   * {@link OperationFeed} without endpoint reuses a subscriber the caller already runs (it must
   * cover this client's project). Default false.
   */
  operationEvents?: boolean | OperationFeed;
}

/**
 * Typed calls on the instance API. One thin file per resource family does the work
 * (instances.ts, snapshots.ts, operations.ts, server.ts, events.ts); this class binds them to a
 * transport and a project. Scoping (`withProject`) returns a new client that shares the
 * connection pool instead of mutating this one.
 */
export class InstanceClient {
  readonly transport: Transport;
  private readonly scope: Scope;
  /** Whether this client made its transport (and so closes it); scoped clients share their parent's. */
  private readonly ownsTransport: boolean;
  private readonly ownsFeed: boolean;

  constructor(target: Target | Transport, opts: ClientOptions = {}) {
    this.ownsTransport = !(target instanceof Transport);
    this.transport = target instanceof Transport ? target : new Transport(target, { timeoutMs: opts.timeoutMs, onFailover: opts.onFailover });
    const project = opts.project ?? this.transport.target.project;
    const feed =
      opts.operationEvents instanceof OperationFeed
        ? opts.operationEvents
        : opts.operationEvents
          ? new OperationFeed(() => this.endpointAt(['operation'], { project }))
          : undefined;
    this.ownsFeed = !(opts.operationEvents instanceof OperationFeed);
    this.scope = new Scope(this.transport, project, feed);
  }

  get target(): Target {
    return this.transport.target;
  }

  get project(): string | undefined {
    return this.scope.project;
  }

  /** The path and query as this client sends a request for `path` (with its `project=`): what the audit records. */
  pathOf(path: string): string {
    return this.scope.path(path);
  }

  /** A client for another project, sharing this one's connections. */
  withProject(project: string): InstanceClient {
    return new InstanceClient(this.transport, { project, operationEvents: this.ownsFeed ? Boolean(this.scope.feed) : this.scope.feed });
  }

  /**
   * A client of the same project and operation feed that sends through `transport` (one that
   * wraps this client's, such as an acting transport): what the wrapper does, every call does.
   */
  through(transport: Transport): InstanceClient {
    return new InstanceClient(transport, { project: this.project, ...(this.scope.feed ? { operationEvents: this.scope.feed } : {}) });
  }

  /** A client whose operations are awaited through events (subscribed before each request). */
  withOperationEvents(): InstanceClient {
    return new InstanceClient(this.transport, { project: this.project, operationEvents: true });
  }

  /** `GET /1.0`: server environment, api_extensions (`has(ext)`), auth. */
  server(opts: { signal?: AbortSignal } = {}): Promise<ServerInfo> {
    return getServer(this.scope, opts);
  }

  /** `GET /1.0/cluster/members?recursion=1`: the members of a clustered server, with their status. */
  clusterMembers(opts: { signal?: AbortSignal } = {}): Promise<ClusterMember[]> {
    return listClusterMembers(this.scope, opts);
  }

  /** `GET /`: supported API versions (`["/1.0"]`). */
  apiVersions(opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    return getApiVersions(this.scope, opts);
  }

  /** Lists instances: URLs (recursion 0), objects (1, the default) or objects with state (2). */
  listInstances(opts: ListOptions & { recursion: 0 }): Promise<string[]>;
  listInstances(opts: ListOptions & { recursion: 2 }): Promise<InstanceFull[]>;
  listInstances(opts?: ListOptions & { recursion?: 1 }): Promise<Instance[]>;
  listInstances(opts: ListOptions = {}): Promise<string[] | Instance[] | InstanceFull[]> {
    return instances.listInstances(this.scope, opts);
  }

  /** One instance with its ETag. */
  getInstance(name: string, opts: { signal?: AbortSignal } = {}): Promise<Versioned<Instance>> {
    return instances.getInstance(this.scope, name, opts);
  }

  /** Live state (status, pid, …); has no ETag. */
  getInstanceState(name: string, opts: { signal?: AbortSignal } = {}): Promise<InstanceState> {
    return instances.getInstanceState(this.scope, name, opts);
  }

  /** `PUT /1.0/instances/<name>/state`: start, stop, restart, freeze, unfreeze. */
  changeState(name: string, change: StateChange, opts: RequestOptions = {}): Promise<Operation> {
    return instances.changeState(this.scope, name, change, opts);
  }

  /** `POST /1.0/instances`. */
  createInstance(body: InstanceCreate, opts: RequestOptions = {}): Promise<Operation> {
    return instances.createInstance(this.scope, body, opts);
  }

  /**
   * `PUT /1.0/instances/<name>` with If-Match: replaces the whole object. Send back what was
   * read, `volatile.*` keys included. A stale ETag fails with API_PRECONDITION_FAILED (412).
   */
  putInstance(name: string, value: Instance, etag: string | undefined, opts: RequestOptions = {}): Promise<Operation> {
    return instances.putInstance(this.scope, name, value, etag, opts);
  }

  /** `PATCH /1.0/instances/<name>`: merges the given fields; a config key set to `""` is removed. */
  patchInstance(name: string, patch: Partial<Instance>, etag?: string, opts: RequestOptions = {}): Promise<void> {
    return instances.patchInstance(this.scope, name, patch, etag, opts);
  }

  /** Read-modify-write with ETag retries; see {@link instances.updateInstance}. */
  update(
    name: string,
    fn: (current: Instance, attempt: number) => Instance | void | Promise<Instance | void>,
    opts: UpdateOptions = {},
  ): Promise<Instance> {
    return instances.updateInstance(this.scope, name, fn, opts);
  }

  /** `DELETE /1.0/instances/<name>` (refused with 400 while it runs). */
  deleteInstance(name: string, opts: RequestOptions = {}): Promise<Operation> {
    return instances.deleteInstance(this.scope, name, opts);
  }

  /** Snapshots of an instance: names' URLs (recursion 0) or objects (1, the default). */
  listSnapshots(instance: string, opts: { recursion: 0; signal?: AbortSignal }): Promise<string[]>;
  listSnapshots(instance: string, opts?: { recursion?: 1; signal?: AbortSignal }): Promise<Snapshot[]>;
  listSnapshots(instance: string, opts: { recursion?: 0 | 1; signal?: AbortSignal } = {}): Promise<string[] | Snapshot[]> {
    return snapshots.listSnapshots(this.scope, instance, opts);
  }

  getSnapshot(instance: string, snapshot: string, opts: { signal?: AbortSignal } = {}): Promise<Versioned<Snapshot>> {
    return snapshots.getSnapshot(this.scope, instance, snapshot, opts);
  }

  createSnapshot(instance: string, create: SnapshotCreate = {}, opts: RequestOptions = {}): Promise<Operation> {
    return snapshots.createSnapshot(this.scope, instance, create, opts);
  }

  renameSnapshot(instance: string, snapshot: string, newName: string, opts: RequestOptions = {}): Promise<Operation> {
    return snapshots.renameSnapshot(this.scope, instance, snapshot, newName, opts);
  }

  deleteSnapshot(instance: string, snapshot: string, opts: RequestOptions = {}): Promise<Operation> {
    return snapshots.deleteSnapshot(this.scope, instance, snapshot, opts);
  }

  setSnapshotExpiry(instance: string, snapshot: string, expiresAt: Date | string | null, opts: RequestOptions = {}): Promise<void> {
    return snapshots.setSnapshotExpiry(this.scope, instance, snapshot, expiresAt, opts);
  }

  /** `PUT /1.0/instances/<name>` `{"restore": snapshot}`. */
  restoreSnapshot(instance: string, snapshot: string, opts: RequestOptions = {}): Promise<Operation> {
    return instances.restoreSnapshot(this.scope, instance, snapshot, opts);
  }

  /**
   * `POST /1.0/instances/<name>/exec`, non-interactive: connects the command's streams (stdin
   * closed, stdout/stderr kept up to a bound), kills it with SIGKILL when `timeoutMs` passes.
   * Wait on the session for the exit code; see {@link ExecSession}.
   */
  exec(name: string, req: ExecRequest, opts: ExecOptions = {}): Promise<ExecSession> {
    return startExec(this.scope, name, req, opts);
  }

  /** A handle on an operation known by id (e.g. persisted before a restart). */
  async getOperation(id: string, opts: { signal?: AbortSignal } = {}): Promise<Operation> {
    return new Operation(
      this.transport,
      await operations.getOperationObject(this.transport, id, { project: this.project, ...opts }),
      undefined,
      this.project,
    );
  }

  /** Every operation the server still remembers (finished ones are forgotten after ~5 s). */
  listOperations(opts: { allProjects?: boolean; signal?: AbortSignal } = {}): Promise<OperationObject[]> {
    return operations.listOperations(this.transport, { project: this.project, ...opts });
  }

  /** `DELETE /1.0/operations/<id>` without a handle: the server decides (400 not cancellable, 404 unknown). */
  cancelOperation(id: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    return operations.cancelOperation(this.transport, id, { project: this.project, ...opts });
  }

  /** The events WebSocket for the given types, scoped like this client (or all projects). */
  eventsEndpoint(types: EventType[], opts: { allProjects?: boolean } = {}): EventsEndpoint {
    return this.endpointAt(types, { project: this.project, allProjects: opts.allProjects });
  }

  /** At the address calls use now (a cluster target fails over between its members' addresses). */
  private endpointAt(types: EventType[], scope: { project?: string; allProjects?: boolean }): EventsEndpoint {
    const origin = this.transport.activeOrigin;
    return {
      ...eventsEndpoint(this.transport.activeTarget, types, scope),
      unreachable: () => this.transport.failover(origin, 'the event stream could not connect'),
    };
  }

  /**
   * Closes this client's operation-event socket, and the pooled connections if this client made
   * them (a client from `withProject`/`withOperationEvents` leaves its parent's open).
   */
  async close(): Promise<void> {
    if (this.ownsFeed) await this.scope.feed?.close();
    if (this.ownsTransport) await this.transport.close();
  }
}
