import { z } from 'zod';
import { snapshotSchema, type Snapshot, type Versioned } from './instance.js';
import { instancePath } from './instances.js';
import type { Operation } from './operation.js';
import type { Scope } from './scope.js';
import type { RequestOptions } from './transport.js';
import { parseMetadata } from './envelope.js';

/** Typed calls on `/1.0/instances/<name>/snapshots`. */

function snapshotPath(instance: string, snapshot?: string): string {
  return instancePath(instance, snapshot === undefined ? '/snapshots' : `/snapshots/${encodeURIComponent(snapshot)}`);
}

/** Body of a snapshot creation. */
export interface SnapshotCreate {
  /** Default: the server's `snapshots.pattern` (`snap0`, `snap1`, …). */
  name?: string;
  stateful?: boolean;
  /** When the server deletes the snapshot by itself. */
  expiresAt?: Date | string;
}

export async function listSnapshots(
  scope: Scope,
  instance: string,
  opts: { recursion?: 0 | 1; signal?: AbortSignal } = {},
): Promise<string[] | Snapshot[]> {
  const recursion = opts.recursion ?? 1;
  const path = scope.path(snapshotPath(instance), { recursion });
  const res = await scope.sync('GET', path, { signal: opts.signal });
  return parseMetadata(z.array(recursion === 0 ? z.string() : snapshotSchema), res.envelope.metadata ?? [], 'GET', path, res.status) as
    string[] | Snapshot[];
}

export async function getSnapshot(
  scope: Scope,
  instance: string,
  snapshot: string,
  opts: { signal?: AbortSignal } = {},
): Promise<Versioned<Snapshot>> {
  const path = scope.path(snapshotPath(instance, snapshot));
  const res = await scope.sync('GET', path, opts);
  return { value: parseMetadata(snapshotSchema, res.envelope.metadata, 'GET', path, res.status), etag: res.etag };
}

export function createSnapshot(scope: Scope, instance: string, create: SnapshotCreate = {}, opts: RequestOptions = {}): Promise<Operation> {
  const body: Record<string, unknown> = { stateful: create.stateful ?? false };
  if (create.name) body.name = create.name;
  if (create.expiresAt) body.expires_at = new Date(create.expiresAt).toISOString();
  return scope.async('POST', scope.path(snapshotPath(instance)), { ...opts, body });
}

export function renameSnapshot(scope: Scope, instance: string, snapshot: string, newName: string, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('POST', scope.path(snapshotPath(instance, snapshot)), { ...opts, body: { name: newName } });
}

export function deleteSnapshot(scope: Scope, instance: string, snapshot: string, opts: RequestOptions = {}): Promise<Operation> {
  return scope.async('DELETE', scope.path(snapshotPath(instance, snapshot)), opts);
}

/** Changes a snapshot's expiry (the only field PATCH/PUT can change); `null` clears it. */
export function setSnapshotExpiry(
  scope: Scope,
  instance: string,
  snapshot: string,
  expiresAt: Date | string | null,
  opts: RequestOptions = {},
): Promise<void> {
  const expires_at = expiresAt === null ? '0001-01-01T00:00:00Z' : new Date(expiresAt).toISOString();
  return scope.syncOrWait('PATCH', scope.path(snapshotPath(instance, snapshot)), { ...opts, body: { expires_at } });
}
