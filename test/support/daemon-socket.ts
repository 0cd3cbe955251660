import { request } from 'node:http';
import type { DaemonBed } from './daemon-bed.js';

/**
 * One request on a bed's unix socket, sent at once as an operator's script would send it (not
 * through the CLI, whose start-up on a loaded machine takes longer than the races these tests are
 * for): the HTTP status and the envelope's metadata.
 */
export function onSocket<T>(
  bed: Pick<DaemonBed, 'socket'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ code: number; metadata: T | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath: bed.socket, path, method, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, metadata: (JSON.parse(text) as { metadata?: T }).metadata }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** An operation as the daemon lists it. */
interface ListedOperation {
  id?: string;
  status?: string;
  err?: string;
  created_at?: string;
  updated_at?: string;
}

/** The operator's stop, as `lxc stop` sends it: the HTTP status, and its operation's id and creation (daemon time, ms). */
export async function operatorStop(bed: Pick<DaemonBed, 'socket'>, name: string): Promise<{ status: number; id: string; createdAt: number }> {
  const { code, metadata } = await onSocket<ListedOperation>(bed, 'PUT', `/1.0/instances/${name}/state`, {
    action: 'stop',
    timeout: -1,
    force: false,
    stateful: false,
  });
  return { status: code, id: String(metadata?.id), createdAt: Date.parse(String(metadata?.created_at)) };
}

/**
 * How an operation ended, once it has (waited up to 30 s): its status, error and last update;
 * undefined once the daemon forgot it. (Incus answers the wait on a failed operation with an error
 * envelope: the operation itself is read after it.)
 */
export async function operationEnd(
  bed: Pick<DaemonBed, 'socket'>,
  id: string,
): Promise<{ status: string; err: string; updatedAt: string } | undefined> {
  await onSocket(bed, 'GET', `/1.0/operations/${id}/wait?timeout=30`);
  const { code, metadata } = await onSocket<ListedOperation>(bed, 'GET', `/1.0/operations/${id}`);
  return code === 200 && metadata?.status ? { status: metadata.status, err: metadata.err ?? '', updatedAt: String(metadata.updated_at) } : undefined;
}

/** When an operation was created (daemon time, ms), while the daemon still lists it; undefined once gone. */
export async function operationCreatedAt(bed: Pick<DaemonBed, 'socket'>, id: string): Promise<number | undefined> {
  const { code, metadata } = await onSocket<ListedOperation>(bed, 'GET', `/1.0/operations/${id}`);
  const at = Date.parse(String(metadata?.created_at));
  return code === 200 && !Number.isNaN(at) ? at : undefined;
}
