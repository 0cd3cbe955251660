import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { familiesFor, instanceOf, type InstanceFamily } from './common.js';

/**
 * `GET …/console` (the console log `lxc console --show-log` prints) and `DELETE …/console` (clears
 * it), as the test beds answer them for a busybox guest, whose console stays empty (observed on
 * LXD 5.0.2 and Incus 6.0.4):
 *
 * - LXD 5.0.2 cannot read the log of a running container (500 `open : no such file or directory`:
 *   liblxc hands it no path) nor of one never started (500 `open /var/log/lxd/<n>/console.log: no
 *   such file or directory`); a stopped one answers its (empty) file.
 * - Incus answers a running or never-started instance with an empty `application/json` body, a
 *   stopped one with its (empty) file.
 *
 * The interactive console (`POST …/console`, a websocket) is not served.
 */
export function registerConsoleLog(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const path = `/1.0/${family.prefix}/:name/console`;
    router.on('GET', path, (req) => consoleLog(req, family));
    router.on('DELETE', path, (req) => (instanceOf(req, family), sync({})));
    router.on('POST', path, (req) => {
      instanceOf(req, family);
      throw new SimHttpError(400, 'The simulator does not serve an interactive console (only its log: GET …/console)');
    });
  }
}

function consoleLog(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = instanceOf(req, family);
  const later = req.ctx.opts.revision === 'later';
  const file = `/var/log/${later ? 'incus' : 'lxd'}/${inst.name}/console.log`;
  const neverStarted = inst.lastUsedAt.startsWith('0001');
  if (!later && inst.isActive) throw new SimHttpError(500, 'open : no such file or directory');
  if (!later && neverStarted) throw new SimHttpError(500, `open ${file}: no such file or directory`);
  if (inst.isActive || neverStarted) return { kind: 'file', contentType: 'application/json', body: '' };
  return {
    kind: 'file',
    contentType: 'application/octet-stream',
    body: '',
    headers: { 'Accept-Ranges': 'bytes', 'Content-Disposition': `inline;filename=${file}`, 'Last-Modified': new Date().toUTCString() },
  };
}
