import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimInstance } from '../instance-model.js';
import type { Router, SimRequest } from '../router.js';
import { familiesFor, instanceOf, type InstanceFamily } from './common.js';

/**
 * …/logs (the list) and …/logs/<file>: `lxc info --show-log` reads `lxc.log`. The output of exec
 * requests made with `record-output` is there too on the earlier revision (`exec_<id>.stdout`,
 * deletable), as LXD 5.0.2 keeps it; the later revision keeps it under …/logs/exec-output/, as
 * Incus does (texts and statuses of both observed on the daemons).
 */
export function registerInstanceLogs(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const base = `/1.0/${family.prefix}/:name/logs`;
    router.on('GET', base, (req) => {
      const inst = instanceOf(req, family);
      const names = revision === 'earlier' ? [...req.ctx.execRecords.names(inst), ...logFiles(inst)].sort() : logFiles(inst);
      return sync(names.map((f) => `/1.0/${family.prefix}/${inst.name}/logs/${f}`));
    });
    if (revision === 'later') {
      router.on('GET', `${base}/exec-output`, (req) => {
        const inst = instanceOf(req, family);
        return sync(
          req.ctx.execRecords
            .names(inst)
            .sort()
            .map((f) => `/1.0/${family.prefix}/${inst.name}/logs/exec-output/${f}`),
        );
      });
      router.on('GET', `${base}/exec-output/:file`, (req) => execOutput(req, family, 'open'));
      router.on('DELETE', `${base}/exec-output/:file`, (req) => execOutput(req, family, 'remove'));
    }
    router.on('GET', `${base}/:file`, (req) =>
      revision === 'earlier' && isExecRecord(req.params.file!) ? execOutput(req, family, 'open') : file(req, family),
    );
    router.on('DELETE', `${base}/:file`, (req) => {
      const name = req.params.file!;
      if (revision === 'earlier' && isExecRecord(name)) return execOutput(req, family, 'remove');
      instanceOf(req, family);
      throw new SimHttpError(
        400,
        revision === 'later' ? 'Only log files excluding qemu.log and lxc.log may be deleted' : 'lxc.log and lxc.conf may not be deleted',
      );
    });
  }
}

function isExecRecord(name: string): boolean {
  return /^exec_[^/]+\.(stdout|stderr)$/.test(name);
}

/** GET or DELETE of one exec output file, with the daemon's error for a missing one. */
function execOutput(req: SimRequest, family: InstanceFamily, op: 'open' | 'remove'): SimResponse {
  const inst = instanceOf(req, family);
  const name = req.params.file!;
  const later = req.ctx.opts.revision === 'later';
  if (later && !isExecRecord(name)) throw new SimHttpError(400, `Exec record-output file name "${name}" not valid`);
  const where = later ? `/var/lib/incus/containers/${inst.name}/exec-output/${name}` : `/var/log/lxd/${inst.name}/${name}`;
  const record = req.ctx.execRecords.get(inst, name);
  // LXD 5.0.2 answers a missing file's GET with 500, its DELETE with 404; Incus both with 404.
  if (!record) throw new SimHttpError(op === 'open' && !later ? 500 : 404, `${op} ${where}: no such file or directory`);
  if (op === 'remove') {
    req.ctx.execRecords.delete(inst, name);
    return sync({});
  }
  return {
    kind: 'file',
    contentType: 'application/octet-stream',
    body: record.body,
    headers: { 'Content-Disposition': `inline;filename=${name}`, 'Last-Modified': record.modified.toUTCString() },
  };
}

/** `lxc.log` exists (empty) from creation, as on LXD; `lxc.conf` once the container has started. */
function logFiles(inst: SimInstance): string[] {
  return neverStarted(inst) ? ['lxc.log'] : ['lxc.conf', 'lxc.log'];
}

function neverStarted(inst: SimInstance): boolean {
  return inst.lastUsedAt.startsWith('0001');
}

/**
 * A plausible liblxc log: the lines a busybox container started by LXD 5.0.2 leaves on the test
 * bed's host (liblxc's warnings about cgroup files it cannot chown), stamped with the last start.
 */
function file(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = instanceOf(req, family);
  const name = req.params.file!;
  if (!logFiles(inst).includes(name)) throw new SimHttpError(404, 'Log file not found');
  const stamp = inst.lastUsedAt.replace(/[-:T]/g, '').slice(0, 14);
  const body = neverStarted(inst)
    ? ''
    : name === 'lxc.conf'
      ? `lxc.log.file = /var/log/lxd/${inst.name}/lxc.log\nlxc.log.level = warn\nlxc.uts.name = ${inst.name}\nlxc.rootfs.path = dir:/var/lib/lxd/containers/${inst.name}/rootfs\n`
      : ['memory.oom.group', 'memory.reclaim']
          .map(
            (f) =>
              `lxc ${inst.name} ${stamp}.000 WARN     cgfsng - ../src/lxc/cgroups/cgfsng.c:fchowmodat:1619 - No such file or directory - Failed to fchownat(34, ${f}, 1000000, 0, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW )\n`,
          )
          .join('');
  return { kind: 'file', contentType: 'application/octet-stream', body };
}
