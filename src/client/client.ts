import { z } from 'zod';
import { ApiError } from './api-error.js';
import { instanceSchema, instanceStateSchema, type Instance, type InstanceState, type StateChange, type Versioned } from './instance.js';
import { Operation } from './operation.js';
import { operationSchema } from './envelope.js';
import type { Target } from './target.js';
import { Transport, type RequestOptions, type Response } from './transport.js';

/** Options of {@link InstanceClient}. */
export interface ClientOptions {
  /** Project to scope calls to. Default: the server's default project. */
  project?: string;
  /** Per-call timeout in milliseconds. Default 30 000. */
  timeoutMs?: number;
}

/** Where and how to open the events WebSocket of a target. */
export interface EventsEndpoint {
  /** URL for the `ws` package (`ws+unix://…` for a socket). */
  url: string;
  options: { cert?: string; key?: string; ca?: string; rejectUnauthorized?: boolean };
}

/**
 * Typed calls on the instance API. Scoping (`withProject`) returns a new client that shares the
 * connection pool instead of mutating this one.
 */
export class InstanceClient {
  readonly transport: Transport;
  readonly project: string | undefined;

  constructor(target: Target | Transport, opts: ClientOptions = {}) {
    this.transport = target instanceof Transport ? target : new Transport(target, { timeoutMs: opts.timeoutMs });
    this.project = opts.project;
  }

  get target(): Target {
    return this.transport.target;
  }

  withProject(project: string): InstanceClient {
    return new InstanceClient(this.transport, { project });
  }

  private path(path: string, query: Record<string, string | number | undefined> = {}): string {
    const q = new URLSearchParams();
    if (this.project) q.set('project', this.project);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
  }

  private async sync(method: string, path: string, opts?: RequestOptions): Promise<Extract<Response, { kind: 'sync' }>> {
    const res = await this.transport.request(method, path, opts);
    if (res.kind !== 'sync') throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: expected a sync answer, got async`, { method, path, status: res.status });
    return res;
  }

  private async async(method: string, path: string, opts?: RequestOptions): Promise<Operation> {
    const res = await this.transport.request(method, path, opts);
    if (res.kind !== 'async') throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: expected an async answer, got sync`, { method, path, status: res.status });
    return new Operation(this.transport, res.envelope.metadata);
  }

  /** `GET /1.0`: server environment, api_extensions, auth. */
  async server(): Promise<Record<string, unknown>> {
    const res = await this.sync('GET', this.path('/1.0'));
    return z.record(z.string(), z.unknown()).parse(res.envelope.metadata);
  }

  /** Instances with their state (recursion 2 carries `state`), optionally across all projects. */
  async listInstances(opts: { allProjects?: boolean; filter?: string } = {}): Promise<Instance[]> {
    const query = { recursion: 1, 'all-projects': opts.allProjects ? 'true' : undefined, filter: opts.filter };
    const path = opts.allProjects ? `/1.0/instances?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][])}` : this.path('/1.0/instances', query);
    const res = await this.sync('GET', path);
    return z.array(instanceSchema).parse(res.envelope.metadata);
  }

  /** One instance with its ETag. */
  async getInstance(name: string): Promise<Versioned<Instance>> {
    const res = await this.sync('GET', this.path(`/1.0/instances/${encodeURIComponent(name)}`));
    return { value: instanceSchema.parse(res.envelope.metadata), etag: res.etag };
  }

  /** Live state (status, pid, …); has no ETag. */
  async getInstanceState(name: string): Promise<InstanceState> {
    const res = await this.sync('GET', this.path(`/1.0/instances/${encodeURIComponent(name)}/state`));
    return instanceStateSchema.parse(res.envelope.metadata);
  }

  /** `PUT /1.0/instances/<name>/state`: start, stop, restart, freeze, unfreeze. */
  async changeState(name: string, change: StateChange, opts: RequestOptions = {}): Promise<Operation> {
    return this.async('PUT', this.path(`/1.0/instances/${encodeURIComponent(name)}/state`), { ...opts, body: change });
  }

  /** A handle on an operation known by id (e.g. persisted before a restart). */
  async getOperation(id: string): Promise<Operation> {
    const res = await this.sync('GET', `/1.0/operations/${encodeURIComponent(id)}`);
    return new Operation(this.transport, operationSchema.parse(res.envelope.metadata));
  }

  /** The events WebSocket for the given types, scoped like this client (or all projects). */
  eventsEndpoint(types: string[], opts: { allProjects?: boolean } = {}): EventsEndpoint {
    const q = new URLSearchParams({ type: types.join(',') });
    if (opts.allProjects) q.set('all-projects', 'true');
    else if (this.project) q.set('project', this.project);
    const t = this.target;
    if (t.kind === 'unix') return { url: `ws+unix://${t.socketPath}:/1.0/events?${q}`, options: {} };
    return {
      url: `${t.origin.replace(/^https/, 'wss')}/1.0/events?${q}`,
      options: { cert: t.cert, key: t.key, ca: t.serverCert, rejectUnauthorized: Boolean(t.serverCert) },
    };
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}
