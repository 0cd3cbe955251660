import { StatusCode } from '../../client/status-code.js';
import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, familiesFor, instanceOf, instanceResources, type InstanceFamily } from './common.js';

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
 * `POST …/console` attaches to the console ({@link attach}).
 */
export function registerConsole(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    const path = `/1.0/${family.prefix}/:name/console`;
    router.on('GET', path, (req) => consoleLog(req, family));
    router.on('DELETE', path, async (req) => {
      (await req.ctx.guests.consoleOf(instanceOf(req, family)))?.clear();
      return sync({});
    });
    router.on('POST', path, (req) => attach(req, family));
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

/**
 * `POST …/console` (`lxc console`): a `Showing console` operation of class websocket whose data
 * ("0") and control sockets attach the client to the running container's console
 * (exec/console-sockets.ts), with the daemons' refusals (recorded on LXD 5.0.2 and Incus 6.0.4): a
 * type other than `console` and `vga` (400 `Unknown console type "x"`), `vga` on a container (400),
 * an instance not running or frozen (400); on Incus a console an operation holds (500, unless
 * `force`, which cancels that operation). The operation may be cancelled on Incus only.
 */
async function attach(req: SimRequest, family: InstanceFamily): Promise<SimResponse> {
  const { ctx } = req;
  const body = bodyObject(req);
  const type = body.type === undefined || body.type === '' ? 'console' : body.type;
  if (type !== 'console' && type !== 'vga') throw new SimHttpError(400, `Unknown console type ${JSON.stringify(type)}`);
  const inst = instanceOf(req, family);
  if (type === 'vga') throw new SimHttpError(400, 'VGA console is only supported by virtual machines');
  if (!inst.isActive) throw new SimHttpError(400, 'Instance is not running');
  if (inst.statusCode === StatusCode.Frozen) throw new SimHttpError(400, 'Instance is frozen');
  const later = ctx.opts.revision === 'later';
  const console = (await ctx.guests.fs(inst)).console;
  if (later && ctx.consoleSockets.holder(console)) {
    if (body.force !== true) throw new SimHttpError(500, 'This console is already connected. Force is required to take it over.');
    ctx.consoleSockets.takeOver(console);
  }
  const secrets = { '0': ctx.ids.secret(), control: ctx.ids.secret() };
  const op = ctx.ops.create({
    project: inst.project,
    location: inst.location,
    description: 'Showing console',
    class: 'websocket',
    resources: instanceResources(req, inst),
    metadata: { fds: { ...secrets } },
    mayCancel: later,
  });
  op.running();
  ctx.consoleSockets.open(op, secrets, console);
  return asyncOp(op.url, ctx.ops.render(op));
}
