import { posix } from 'node:path';
import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { GuestEntry, WriteSpec } from '../guest/guest-fs.js';
import type { Router, SimRequest } from '../router.js';
import { familiesFor, instanceOf, type InstanceFamily } from './common.js';

/**
 * The files API, `GET|HEAD|POST|DELETE /1.0/instances/<n>/files?path=…`, over the instance's guest
 * filesystem, as LXD 5.0.2 and Incus 6.0 answer it (observed on both): a file comes back as its
 * bytes (`application/octet-stream`, `Content-Disposition: inline;filename=…`), a directory as a
 * sync envelope listing its names, a symlink as its target; every answer carries the entry's
 * `X-LXD-Uid`, `-Gid`, `-Mode` (four octal digits, permission bits only), `-Type` and `-Modified` (`X-Incus-*` in the
 * later revision). A push takes `X-LXD-type` (file, directory, symlink), `-uid`, `-gid`, `-mode`
 * and `-write` (overwrite, append); Incus also reads `X-Incus-*`. A path without its leading slash
 * is resolved from `/` (the lxc 5.0.2 client sends `etc/hostname` for `lxc file pull c1/etc/hostname`).
 * Anything missing (the path, its parent) is 404 "Not Found"; no `path` is 400 "Missing path
 * argument". The instance may be stopped: the daemon reaches its root filesystem all the same.
 */
export function registerFiles(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const path = `/1.0/${family.prefix}/:name/files`;
    router.on('GET', path, (req) => pull(req, family, false));
    router.on('HEAD', path, (req) => pull(req, family, true));
    router.on('POST', path, (req) => push(req, family), { raw: true });
    router.on('DELETE', path, (req) => remove(req, family));
  }
}

const notFound = (): SimHttpError => new SimHttpError(404, 'Not Found');

function pathOf(req: SimRequest): string {
  const path = req.info.query.get('path');
  if (path === null || path === '') throw new SimHttpError(400, 'Missing path argument');
  // A relative path is taken from `/`, the daemons' sftp server's working directory. Trailing slashes and `.`/`..` segments name the same entry, as on a real filesystem.
  const parts: string[] = [];
  for (const p of path.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return `/${parts.join('/')}`;
}

async function pull(req: SimRequest, family: InstanceFamily, head: boolean): Promise<SimResponse> {
  const inst = instanceOf(req, family);
  const path = pathOf(req);
  const fs = await req.ctx.guests.fs(inst);
  const entry = await fs.entry(path);
  if (!entry) throw notFound();
  const headers = entryHeaders(req, entry);
  if (entry.type === 'directory') {
    if (head) return { kind: 'file', contentType: 'application/json', body: '', headers };
    return { kind: 'sync', metadata: await fs.list(path), headers };
  }
  const later = req.ctx.opts.revision === 'later';
  // LXD 5.0.2 answers HEAD with the headers only (as JSON, no length); Incus as a file would be.
  if (head && !later) return { kind: 'file', contentType: 'application/json', body: '', headers };
  // A symlink reads as its target, a relative one resolved from the link's directory (as the daemons answer).
  const raw = await fs.read(path);
  const body = entry.type === 'symlink' ? Buffer.from(posix.resolve(posix.dirname(path), raw.toString('utf8')), 'utf8') : raw;
  req.ctx.lifecycle.emit(inst, 'instance-file-retrieved', { context: { path } });
  return {
    kind: 'file',
    contentType: 'application/octet-stream',
    body: head ? '' : body,
    headers: {
      'Content-Length': String(body.length),
      ...(head ? {} : { 'Accept-Ranges': 'bytes', 'Content-Disposition': `inline;filename=${path.slice(path.lastIndexOf('/') + 1)}` }),
      ...(head ? {} : { 'Last-Modified': entry.mtime.toUTCString() }),
      ...headers,
    },
  };
}

async function push(req: SimRequest, family: InstanceFamily): Promise<SimResponse> {
  const inst = instanceOf(req, family);
  const path = pathOf(req);
  const fs = await req.ctx.guests.fs(inst);
  const parent = await fs.entry(path.slice(0, path.lastIndexOf('/')) || '/');
  if (parent?.type !== 'directory') throw notFound();
  const type = header(req, 'type') ?? 'file';
  const existing = await fs.entry(path);
  const idOf = (name: 'uid' | 'gid'): number | undefined => {
    const n = Number.parseInt(header(req, name) ?? '-1', 10);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  };
  const modeText = header(req, 'mode');
  const mode = modeText === undefined ? undefined : Number.parseInt(modeText, 8);
  if (mode !== undefined && !(mode >= 0 && mode <= 0o7777)) throw new SimHttpError(400, `Invalid mode "${modeText}"`);
  const spec: WriteSpec = {
    uid: idOf('uid') ?? existing?.uid ?? 0,
    gid: idOf('gid') ?? existing?.gid ?? 0,
    // A new directory: LXD gives 0750, Incus 0755; a new file 0644.
    mode: mode ?? existing?.mode ?? (type === 'directory' ? (req.ctx.opts.revision === 'later' ? 0o755 : 0o750) : 0o644),
  };
  const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  switch (type) {
    case 'directory':
      if (existing && existing.type !== 'directory') throw new SimHttpError(400, `"${path}" exists and is not a directory`);
      await fs.mkdir(path, spec);
      break;
    case 'symlink': {
      // As both daemons (their sftp server): no target is "Not Found", an existing entry is
      // refused, and the link belongs to root whatever uid/gid the request gives.
      const target = bytes.toString('utf8');
      if (target === '') throw notFound();
      if (existing) throw new SimHttpError(500, `sftp: "symlink ${target} ${path}: file exists" (SSH_FX_FAILURE)`);
      await fs.symlink(target, path, { uid: 0, gid: 0 });
      break;
    }
    case 'file': {
      if (existing?.type === 'directory') throw new SimHttpError(400, `"${path}" is a directory`);
      const write = header(req, 'write') ?? 'overwrite';
      if (write !== 'overwrite' && write !== 'append') throw new SimHttpError(400, `Bad file write mode: ${write}`);
      await fs.write(path, bytes, { ...spec, append: write === 'append' });
      break;
    }
    default:
      throw new SimHttpError(400, `Bad file type: ${type}`);
  }
  if (existing) await fs.setMeta(path, spec);
  req.ctx.lifecycle.emit(inst, 'instance-file-pushed', { context: { path } });
  return sync({});
}

async function remove(req: SimRequest, family: InstanceFamily): Promise<SimResponse> {
  const inst = instanceOf(req, family);
  const path = pathOf(req);
  const fs = await req.ctx.guests.fs(inst);
  const entry = await fs.entry(path);
  if (!entry) throw notFound();
  // The daemons' sftp server refuses these with its own words (500 on LXD 5.0.2 and Incus 6.0.4).
  if (path === '/') throw new SimHttpError(500, 'sftp: "remove /: device or resource busy" (SSH_FX_FAILURE)');
  if (entry.type === 'directory' && (await fs.list(path)).length > 0)
    throw new SimHttpError(500, `sftp: "remove ${path}: directory not empty" (SSH_FX_FAILURE)`);
  await fs.remove(path);
  req.ctx.lifecycle.emit(inst, 'instance-file-deleted', { context: { path } });
  return sync({});
}

/** A request header of the files API: `X-LXD-<name>`, or in the later revision `X-Incus-<name>` first. */
function header(req: SimRequest, name: string): string | undefined {
  const read = (prefix: string): string | undefined => {
    const v = req.headers[`${prefix}-${name}`];
    return Array.isArray(v) ? v[0] : v;
  };
  return (req.ctx.opts.revision === 'later' ? read('x-incus') : undefined) ?? read('x-lxd');
}

function entryHeaders(req: SimRequest, entry: GuestEntry): Record<string, string> {
  const prefix = req.ctx.opts.revision === 'later' ? 'X-Incus' : 'X-Lxd';
  return {
    [`${prefix}-Gid`]: String(entry.gid),
    // The permission bits only: /tmp (1777) answers 0777, as on both daemons.
    [`${prefix}-Mode`]: (entry.mode & 0o777).toString(8).padStart(4, '0'),
    [`${prefix}-Modified`]: goTime(entry.mtime),
    [`${prefix}-Type`]: entry.type,
    [`${prefix}-Uid`]: String(entry.uid),
  };
}

/** Go's `time.Time.String()` at second precision in UTC, as the daemon writes `X-LXD-Modified`. */
function goTime(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} +0000 UTC`;
}
