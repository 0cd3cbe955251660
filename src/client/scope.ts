import { ApiError } from './api-error.js';
import type { OperationFeed } from './operation-feed.js';
import { Operation } from './operation.js';
import type { RequestOptions, Response, Transport } from './transport.js';

type Query = Record<string, string | number | boolean | undefined>;

/**
 * What the resource-family files (instances.ts, snapshots.ts, server.ts) need from a client: the
 * transport, the project scope, and the sync/async call shapes. Immutable; scoping makes a new one.
 */
export class Scope {
  constructor(
    readonly transport: Transport,
    readonly project: string | undefined,
    readonly feed: OperationFeed | undefined,
  ) {}

  /** `path?query` with this scope's `project=` (or `all-projects=true` when asked; never both). */
  path(path: string, query: Query = {}, opts: { allProjects?: boolean } = {}): string {
    const q = new URLSearchParams();
    if (opts.allProjects) q.set('all-projects', 'true');
    else if (this.project) q.set('project', this.project);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  }

  /** A call that must answer sync (200). */
  async sync(method: string, path: string, opts?: RequestOptions): Promise<Extract<Response, { kind: 'sync' }>> {
    const res = await this.transport.request(method, path, opts);
    if (res.kind !== 'sync')
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: expected a sync answer, got async`, { method, path, status: res.status });
    return res;
  }

  /**
   * A call that starts a background operation (202 + Location). With an operation feed, the
   * subscription is made before the request is sent, so a fast completion cannot be missed.
   */
  async async(method: string, path: string, opts?: RequestOptions): Promise<Operation> {
    const sub = this.feed ? await this.feed.subscribe().catch(() => undefined) : undefined;
    let res: Response;
    try {
      res = await this.transport.request(method, path, opts);
    } catch (err) {
      sub?.release();
      throw err;
    }
    if (res.kind !== 'async') {
      sub?.release();
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: expected an async answer, got sync`, { method, path, status: res.status });
    }
    return new Operation(this.transport, res.envelope.metadata, sub, this.project);
  }

  /** A call the daemon may answer either way (PATCH is sync on LXD 5.0.2); an operation is awaited. */
  async syncOrWait(method: string, path: string, opts?: RequestOptions): Promise<void> {
    const res = await this.transport.request(method, path, opts);
    if (res.kind === 'async') await new Operation(this.transport, res.envelope.metadata, undefined, this.project).wait({ signal: opts?.signal });
  }
}
