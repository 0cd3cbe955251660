import { z } from 'zod';
import { ApiError, isPreconditionFailed } from './api-error.js';
import {
  instanceFullSchema,
  instanceSchema,
  instanceStateSchema,
  type Instance,
  type InstanceFull,
  type InstanceState,
  type StateChange,
  type Versioned,
} from './instance.js';
import type { FilterExpr } from '../filter/ast.js';
import { printFilter } from '../filter/printer.js';
import type { Operation } from './operation.js';
import type { Scope } from './scope.js';
import type { RequestOptions } from './transport.js';
import { parseMetadata, parseMetadataList } from './envelope.js';

/** Typed calls on `/1.0/instances` (and its earlier-revision aliases). */

/**
 * The collection to list. `containers` and `virtual-machines` are aliases of the earlier revision
 * (LXD); Incus answers 404 for them.
 */
export type InstanceCollection = 'instances' | 'containers' | 'virtual-machines';

/** A filter: the expression text, or an expression built with src/filter (printed by its printer). */
export type FilterInput = string | FilterExpr;

/** Options of `listInstances`. */
export interface ListOptions {
  /** 0: URLs; 1: objects (default); 2: objects with state, snapshots and backups. */
  recursion?: 0 | 1 | 2;
  /** Filter expression (seed §4.4). Quote values only when they contain spaces: LXD 5.0.2 rejects `name eq "c1"`. */
  filter?: FilterInput;
  /** List every project (`all-projects=true`) instead of this client's. */
  allProjects?: boolean;
  /** Default `instances`. */
  collection?: InstanceCollection;
  signal?: AbortSignal;
}

export function instancePath(name: string, sub = ''): string {
  return `/1.0/instances/${encodeURIComponent(name)}${sub}`;
}

export async function listInstances(scope: Scope, opts: ListOptions = {}): Promise<string[] | Instance[] | InstanceFull[]> {
  const recursion = opts.recursion ?? 1;
  const filter = opts.filter === undefined || typeof opts.filter === 'string' ? opts.filter : printFilter(opts.filter);
  const path = scope.path(`/1.0/${opts.collection ?? 'instances'}`, { recursion, filter }, { allProjects: opts.allProjects });
  const res = await scope.sync('GET', path, { signal: opts.signal });
  const schema = recursion === 0 ? z.string() : recursion === 1 ? instanceSchema : instanceFullSchema;
  return (await parseMetadataList(schema, res.envelope.metadata ?? [], 'GET', path, res.status)) as string[] | Instance[] | InstanceFull[];
}

export async function getInstance(scope: Scope, name: string, opts: { signal?: AbortSignal } = {}): Promise<Versioned<Instance>> {
  const path = scope.path(instancePath(name));
  const res = await scope.sync('GET', path, opts);
  return { value: parseMetadata(instanceSchema, res.envelope.metadata, 'GET', path, res.status), etag: res.etag };
}

export async function getInstanceState(scope: Scope, name: string, opts: { signal?: AbortSignal } = {}): Promise<InstanceState> {
  const path = scope.path(instancePath(name, '/state'));
  const res = await scope.sync('GET', path, opts);
  return parseMetadata(instanceStateSchema, res.envelope.metadata, 'GET', path, res.status);
}

export function changeState(scope: Scope, name: string, change: StateChange, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('PUT', scope.path(instancePath(name, '/state')), { ...opts, body: change });
}

/** Body of `POST /1.0/instances`. */
export interface InstanceCreate {
  name: string;
  source: { type: 'image' | 'none' | 'copy' | 'migration'; alias?: string; fingerprint?: string; [k: string]: unknown };
  type?: 'container' | 'virtual-machine';
  config?: Record<string, string>;
  devices?: Record<string, Record<string, string>>;
  profiles?: string[];
  ephemeral?: boolean;
  [k: string]: unknown;
}

export function createInstance(scope: Scope, body: InstanceCreate, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('POST', scope.path('/1.0/instances'), { ...opts, body });
}

export function putInstance(scope: Scope, name: string, value: Instance, etag: string | undefined, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('PUT', scope.path(instancePath(name)), { ...opts, body: value, ifMatch: etag });
}

export function patchInstance(scope: Scope, name: string, patch: Partial<Instance>, etag?: string, opts: RequestOptions = {}): Promise<void> {
  return scope.syncOrWait('PATCH', scope.path(instancePath(name)), { ...opts, body: patch, ifMatch: etag });
}

export function deleteInstance(scope: Scope, name: string, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('DELETE', scope.path(instancePath(name)), opts);
}

export function restoreSnapshot(scope: Scope, name: string, snapshot: string, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('PUT', scope.path(instancePath(name)), { ...opts, body: { restore: snapshot } });
}

/** Options of `updateInstance`. */
export interface UpdateOptions {
  /** Attempts in all, counting the first. Default 5. */
  attempts?: number;
  /** Milliseconds to wait for each update operation. Default 60 000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Read-modify-write with ETag protection: reads the instance, applies `fn` to a copy, PUTs it
 * with If-Match and waits; on 412 (the ETag changes on every start and stop on LXD) re-reads and
 * tries again. `volatile.*` keys that `fn` dropped are put back, since the daemon refuses to
 * let a client delete them (notes §11).
 */
export async function updateInstance(
  scope: Scope,
  name: string,
  fn: (current: Instance, attempt: number) => Instance | void | Promise<Instance | void>,
  opts: UpdateOptions = {},
): Promise<Instance> {
  const attempts = opts.attempts ?? 5;
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const { value, etag } = await getInstance(scope, name, { signal: opts.signal });
    const draft = structuredClone(value);
    const next = (await fn(draft, attempt)) ?? draft;
    for (const [k, v] of Object.entries(value.config)) if (k.startsWith('volatile.') && !(k in next.config)) next.config[k] = v;
    try {
      const op = await putInstance(scope, name, next, etag, { signal: opts.signal });
      await op.wait({ timeoutMs: opts.timeoutMs ?? 60_000, signal: opts.signal });
      return next;
    } catch (err) {
      if (!isPreconditionFailed(err)) throw err;
      last = err;
    }
  }
  throw new ApiError('API_PRECONDITION_FAILED', `update of ${name} still conflicted after ${attempts} attempts (the instance keeps changing)`, {
    status: 412,
    method: 'PUT',
    path: instancePath(name),
    cause: last,
  });
}
