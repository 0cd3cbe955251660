import { ClusterActions } from '../cluster-actions.js';
import type { ClusterMembers } from '../cluster.js';
import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { bodyObject, recursionOf } from './common.js';

/**
 * The cluster endpoints in cluster mode (registered before the standalone answers of host.ts):
 * GET /1.0/cluster, GET /1.0/cluster/members[?recursion=1], GET /1.0/cluster/members/<m>, and
 * POST /1.0/cluster/members/<m>/state {"action": "evacuate" | "restore"} (async).
 */
export function registerCluster(router: Router, members: ClusterMembers): void {
  router.on('GET', '/1.0/cluster', () => sync({ server_name: members.serverName, enabled: true, member_config: [] }));
  router.on('GET', '/1.0/cluster/members', (req) => {
    const all = members.list();
    if (recursionOf(req) === 0) return sync(all.map((m) => `/1.0/cluster/members/${m.name}`));
    return sync(all.map((m) => members.render(m)));
  });
  router.on('GET', '/1.0/cluster/members/:member', (req) => sync(members.render(members.get(req.params.member!))));
  router.on('POST', '/1.0/cluster/members/:member/state', memberState);
}

function memberState(req: SimRequest): SimResponse {
  const { ctx } = req;
  const name = req.params.member!;
  ctx.cluster!.get(name);
  const action = bodyObject(req).action;
  if (action !== 'evacuate' && action !== 'restore') throw new SimHttpError(400, `Unknown action "${String(action)}"`);
  const op = ctx.ops.create({
    description: action === 'evacuate' ? 'Evacuating cluster member' : 'Restoring cluster member',
    location: name,
    resources: { cluster: [`/1.0/cluster/members/${name}`] },
  });
  op.running();
  setTimeout(() => {
    const cluster = new ClusterActions(ctx);
    try {
      if (action === 'evacuate') cluster.evacuate(name);
      else cluster.restore(name);
    } catch (err) {
      return op.fail((err as Error).message);
    }
    op.succeed();
  }, ctx.opts.timings.taskMs).unref();
  return asyncOp(op.url, ctx.ops.render(op));
}
