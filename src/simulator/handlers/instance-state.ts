import { StatusCode } from '../../client/status-code.js';
import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { stateActions, type StateAction } from '../state-machine.js';
import { bodyObject, countCall, familiesFor, instanceOf, type InstanceFamily } from './common.js';

/** GET and PUT …/state. */
export function registerInstanceState(router: Router, revision: 'earlier' | 'later'): void {
  for (const family of familiesFor(revision)) {
    router.on('GET', `/1.0/${family.prefix}/:name/state`, (req) => get(req, family));
    router.on('PUT', `/1.0/${family.prefix}/:name/state`, (req) => put(req, family));
  }
}

/** /state carries no ETag (observed). */
function get(req: SimRequest, family: InstanceFamily): SimResponse {
  return sync(instanceOf(req, family).renderState(req.ctx.opts.revision));
}

/**
 * {action, timeout (-1), force, stateful}. Unknown action: sync 400 "Unknown action: 'x'"; every
 * other refusal (already running, already stopped, …) is an async operation failure (notes §3).
 */
function put(req: SimRequest, family: InstanceFamily): SimResponse {
  const inst = instanceOf(req, family);
  const body = bodyObject(req);
  const action = String(body.action ?? '');
  if (!stateActions.has(action)) throw new SimHttpError(400, `Unknown action: '${action}'`);
  const timeout = typeof body.timeout === 'number' ? body.timeout : -1;
  const call = countCall(req, inst, action);
  const op = req.ctx.actions.changeState(inst, { action: action as StateAction, force: body.force === true, timeout }, req.info.requestor);
  void op.wait(-1).then(() => (call.result = op.statusCode === StatusCode.Success ? 'success' : 'failure'));
  return asyncOp(op.url, req.ctx.ops.render(op));
}
