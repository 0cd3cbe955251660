import { StatusCode, statusText } from '../../client/status-code.js';
import { sync, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { recursionOf } from './common.js';

/** /1.0/operations, /1.0/operations/<id>, …/wait. */
export function registerOperations(router: Router): void {
  router.on('GET', '/1.0/operations', list);
  router.on('GET', '/1.0/operations/:id', (req) => sync(req.ctx.ops.render(req.ctx.ops.get(req.params.id!))));
  router.on('DELETE', '/1.0/operations/:id', cancel);
  router.on('GET', '/1.0/operations/:id/wait', wait);
}

/** Grouped by lowercase status text (`running`, `success`, `failure`, …), as observed. */
function list(req: SimRequest): SimResponse {
  const { ctx, info } = req;
  const recursive = recursionOf(req) >= 1;
  const groups: Record<string, unknown[]> = {};
  for (const op of ctx.ops.list(info.allProjects ? null : info.project)) {
    const key = statusText(op.statusCode, ctx.opts.revision).toLowerCase();
    (groups[key] ??= []).push(recursive ? ctx.ops.render(op) : op.url);
  }
  return sync(groups);
}

/** 400 "This operation can't be cancelled" unless may_cancel; 104 then 401 otherwise. */
function cancel(req: SimRequest): SimResponse {
  const op = req.ctx.ops.get(req.params.id!);
  if (op.class === 'token') req.ctx.trust.revokeToken(op.id);
  req.ctx.ops.cancel(op.id);
  return sync({});
}

/**
 * Long poll. timeout in seconds, default -1 (forever). On timeout it answers 200 with the current
 * state (Running 103), like LXD 5.0.2 and Incus; a failure shows only in the object.
 */
async function wait(req: SimRequest): Promise<SimResponse> {
  const op = req.ctx.ops.get(req.params.id!);
  const raw = Number(req.info.query.get('timeout') ?? '-1');
  await op.wait(Number.isFinite(raw) && raw >= 0 ? raw * 1000 : -1);
  if (req.ctx.opts.revision === 'later' && op.statusCode === StatusCode.Failure) {
    // Incus 6.0.4 answers the wait of a failed operation with its error, as an error envelope
    // (error_code 500) under HTTP 200 (observed); LXD 5.0.2 with the operation object.
    const body = `${JSON.stringify({ type: 'error', status: '', status_code: 0, operation: '', error_code: 500, error: op.err, metadata: null })}\n`;
    return { kind: 'file', contentType: 'application/json', body };
  }
  return sync(req.ctx.ops.render(op));
}
