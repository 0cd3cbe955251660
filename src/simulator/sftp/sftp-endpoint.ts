import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SimContext } from '../context.js';
import { refuseUpgrade, SimHttpError } from '../envelope.js';
import { requestInfo, type Identity } from '../transport.js';
import { SftpSession } from './sftp-session.js';

const sftpPath = /^\/1\.0\/instances\/([^/]+)\/sftp$/;

/** Whether an upgrade request is for an instance's SFTP connection. */
export function isSftpUpgrade(req: IncomingMessage): boolean {
  return sftpPath.test(new URL(req.url ?? '/', 'http://sim').pathname);
}

/**
 * `GET /1.0/instances/<n>/sftp` with `Upgrade: sftp`, as Incus 6.0.4 serves it (the `incus file`
 * commands' transport): refusals before the upgrade come back as the daemon's error envelope; then
 * `101 Switching Protocols` with `Upgrade: sftp` and the connection carries SFTP itself
 * ({@link SftpSession}). The instance may be stopped: the daemon reaches its filesystem all the same.
 */
export async function upgradeSftp(ctx: SimContext, req: IncomingMessage, socket: Duplex, head: Buffer, identity: Identity): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const info = requestInfo(ctx, identity, url.searchParams);
  if (ctx.restarting) return refuseUpgrade(socket, 404, 'not found');
  if (!info.trusted) return refuseUpgrade(socket, 403, 'not authorized');
  const name = decodeURIComponent(sftpPath.exec(url.pathname)![1]!);
  if (name.includes('/')) return refuseUpgrade(socket, 400, 'Invalid instance name');
  if (req.headers.upgrade !== 'sftp') return refuseUpgrade(socket, 400, 'Missing or invalid upgrade header');
  let fs;
  try {
    const inst = ctx.store.get(info.project, name);
    if (inst.memberOffline) throw new SimHttpError(500, `Cluster member "${inst.location}" is offline`);
    fs = await ctx.guests.fs(inst);
  } catch (err) {
    if (!(err instanceof SimHttpError)) throw err;
    return refuseUpgrade(socket, err.status === 404 ? 404 : err.status === 403 ? 403 : err.status === 400 ? 400 : 500, err.message);
  }
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: sftp\r\nConnection: Upgrade\r\n\r\n');
  new SftpSession(fs, socket);
  // Bytes the client sent right behind its request (node hands them over apart from the socket's).
  if (head.length > 0) socket.emit('data', head);
}
