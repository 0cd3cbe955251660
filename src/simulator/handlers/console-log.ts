import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { familiesFor, instanceOf, type InstanceFamily } from './common.js';

/**
 * `GET …/console` (the console log `lxc console --show-log` prints) and `DELETE …/console` (clears
 * it), as the test beds answer them for a busybox guest (recorded on LXD 5.0.2 and Incus 6.0.4).
 * What a command writes to `/dev/console` goes into liblxc's ring buffer (`guest-console.ts`):
 *
 * - while the instance runs, a read takes what the ring holds and empties it (`application/octet-stream`,
 *   no file named); an empty ring is LXD 5.0.2's 500 `open : no such file or directory` (liblxc hands
 *   it no path) and Incus's empty `application/json` body;
 * - once it stopped, the log file holds what the ring held unread, read as it is; LXD cannot read
 *   the file of an instance never started (500 `open /var/log/lxd/<n>/console.log: no such file
 *   or directory`), Incus answers it an empty `application/json` body;
 * - `DELETE` empties the ring and the file.
 *
 * The interactive console (`POST …/console`, a websocket) is not served.
 */
export function registerConsoleLog(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const path = `/1.0/${family.prefix}/:name/console`;
    router.on('GET', path, (req) => consoleLog(req, family));
    router.on('DELETE', path, async (req) => {
      (await req.ctx.guests.consoleOf(instanceOf(req, family)))?.clear();
      return sync({});
    });
    router.on('POST', path, (req) => {
      instanceOf(req, family);
      throw new SimHttpError(400, 'The simulator does not serve an interactive console (only its log: GET …/console)');
    });
  }
}

async function consoleLog(req: SimRequest, family: InstanceFamily): Promise<SimResponse> {
  const inst = instanceOf(req, family);
  const later = req.ctx.opts.revision === 'later';
  const file = `/var/log/${later ? 'incus' : 'lxd'}/${inst.name}/console.log`;
  const neverStarted = inst.lastUsedAt.startsWith('0001');
  const console = await req.ctx.guests.consoleOf(inst);
  const logged = (body: Buffer, name: string): SimResponse => ({
    kind: 'file',
    contentType: 'application/octet-stream',
    body,
    headers: { 'Accept-Ranges': 'bytes', 'Content-Disposition': `inline;filename=${name}`, 'Last-Modified': new Date().toUTCString() },
  });
  if (inst.isActive) {
    const ring = console?.take() ?? Buffer.alloc(0);
    if (ring.length > 0) return logged(ring, '');
    if (!later) throw new SimHttpError(500, 'open : no such file or directory');
    return { kind: 'file', contentType: 'application/json', body: '' };
  }
  if (!later && neverStarted) throw new SimHttpError(500, `open ${file}: no such file or directory`);
  if (neverStarted) return { kind: 'file', contentType: 'application/json', body: '' };
  return logged(console?.log ?? Buffer.alloc(0), file);
}
