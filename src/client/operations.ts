import { z } from 'zod';
import { ApiError } from './api-error.js';
import { operationSchema, parseMetadata, type OperationObject } from './envelope.js';
import type { Transport } from './transport.js';

/**
 * REST calls on `/1.0/operations` (list, get, wait, cancel). The handle in operation.ts builds on
 * these; they are also usable on their own, e.g. for an id persisted before a restart.
 */

/** Path of an operation by id. */
export function operationPath(id: string): string {
  return `/1.0/operations/${encodeURIComponent(id)}`;
}

function scoped(path: string, project: string | undefined, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(extra);
  if (project) q.set('project', project);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** `GET /1.0/operations/<id>`. Throws API_NOT_FOUND for an unknown (or forgotten) id. */
export async function getOperationObject(
  transport: Transport,
  id: string,
  opts: { project?: string; signal?: AbortSignal } = {},
): Promise<OperationObject> {
  const res = await transport.request('GET', scoped(operationPath(id), opts.project), { signal: opts.signal });
  if (res.kind !== 'sync')
    throw new ApiError('API_BAD_RESPONSE', `GET ${operationPath(id)}: expected a sync answer`, {
      method: 'GET',
      path: operationPath(id),
      status: res.status,
    });
  return parseMetadata(operationSchema, res.envelope.metadata, 'GET', operationPath(id), res.status);
}

const groupedSchema = z.record(z.string(), z.array(operationSchema).nullable());

/**
 * `GET /1.0/operations?recursion=1`: every operation, whatever its status. The daemon groups them
 * by lowercase status text (`running`, `success`, …); the grouping is flattened here.
 */
export async function listOperations(
  transport: Transport,
  opts: { project?: string; allProjects?: boolean; signal?: AbortSignal } = {},
): Promise<OperationObject[]> {
  const extra: Record<string, string> = { recursion: '1' };
  if (opts.allProjects) extra['all-projects'] = 'true';
  const path = scoped('/1.0/operations', opts.allProjects ? undefined : opts.project, extra);
  const res = await transport.request('GET', path, { signal: opts.signal });
  if (res.kind !== 'sync') throw new ApiError('API_BAD_RESPONSE', `GET ${path}: expected a sync answer`, { method: 'GET', path, status: res.status });
  return Object.values(parseMetadata(groupedSchema, res.envelope.metadata ?? {}, 'GET', path, res.status)).flatMap((ops) => ops ?? []);
}

/**
 * One long-poll of `GET /1.0/operations/<id>/wait?timeout=N`. Returns the operation as the server
 * sees it when the call ends: LXD 5.0.2 and Incus answer the current (possibly still running)
 * state on timeout. Newer LXD may send an error envelope under HTTP 200 instead; a deadline error
 * is mapped back to "still running" (undefined), any other error envelope is thrown.
 */
export async function waitOperationObject(
  transport: Transport,
  id: string,
  seconds: number,
  opts: { project?: string; signal?: AbortSignal } = {},
): Promise<OperationObject | undefined> {
  const path = scoped(`${operationPath(id)}/wait`, opts.project, { timeout: String(seconds) });
  try {
    const res = await transport.request('GET', path, { signal: opts.signal, timeoutMs: seconds * 1000 + 10_000 });
    if (res.kind !== 'sync')
      throw new ApiError('API_BAD_RESPONSE', `GET ${path}: expected a sync answer`, { method: 'GET', path, status: res.status });
    return parseMetadata(operationSchema, res.envelope.metadata, 'GET', path, res.status);
  } catch (err) {
    // The server's text only: the request's own path holds `timeout=` and must not count as one.
    if (err instanceof ApiError && err.status !== undefined && err.status < 400 && /deadline|timed? ?out/i.test(err.serverError ?? '')) {
      // Incus answers a long-poll that ran out with "context deadline exceeded", not the operation: read it.
      return getOperationObject(transport, id, { project: opts.project, signal: opts.signal });
    }
    throw err;
  }
}

/**
 * `DELETE /1.0/operations/<id>`: asks the server to cancel. The server answers 400 for an
 * operation that cannot be cancelled (mapped to OPERATION_NOT_CANCELLABLE) and 404 for an
 * unknown one (API_NOT_FOUND).
 */
export async function cancelOperation(transport: Transport, id: string, opts: { project?: string; signal?: AbortSignal } = {}): Promise<void> {
  const path = scoped(operationPath(id), opts.project);
  try {
    await transport.request('DELETE', path, { signal: opts.signal });
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && /can(no|')t be cancel+ed|not cancel+able/i.test(err.message)) {
      throw new ApiError('OPERATION_NOT_CANCELLABLE', err.message, { status: 400, errorCode: err.errorCode, method: 'DELETE', path, cause: err });
    }
    throw err;
  }
}
