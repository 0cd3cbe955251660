import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimInstance } from '../instance-model.js';
import type { Router, SimRequest } from '../router.js';
import { familiesFor, instanceOf, type InstanceFamily } from './common.js';

/** …/logs (the list) and …/logs/<file>: `lxc info --show-log` reads `lxc.log`. */
export function registerInstanceLogs(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    router.on('GET', `/1.0/${family.prefix}/:name/logs`, (req) => {
      const inst = instanceOf(req, family);
      return sync(logFiles(inst).map((f) => `/1.0/${family.prefix}/${inst.name}/logs/${f}`));
    });
    router.on('GET', `/1.0/${family.prefix}/:name/logs/:file`, (req) => file(req, family));
  }
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
