import type { SimulatorControls } from '../controls.js';
import { sync, SimHttpError } from '../envelope.js';
import type { HttpOutcome } from '../guest/http-scripts.js';
import type { CommandOutcome } from '../guest/scripted-commands.js';
import type { Router, SimRequest } from '../router.js';

/**
 * The HTTP control API under /sim/ (outside the daemon's /1.0 tree), mapping onto SimulatorControls.
 * Bodies are optional JSON; `project` may be given in the query string like everywhere else.
 *
 * | Method + path | Body | Effect |
 * |---|---|---|
 * | POST /sim/instances/<n>/crash | – | crash |
 * | POST /sim/instances/<n>/error | – | Error 112 |
 * | POST /sim/instances/<n>/ready | – | Ready 113 (later revision) |
 * | POST /sim/instances/<n>/fail-next | {count, err} | next operations fail |
 * | POST /sim/instances/<n>/hang-next | {count} | next operations hang |
 * | POST /sim/instances/<n>/crash-loop | {uptime_ms} | crash loop on |
 * | DELETE /sim/instances/<n>/crash-loop | – | crash loop off |
 * | POST /sim/instances/<n>/fail-next-start | – | next start fails |
 * | POST /sim/instances/<n>/ignore-shutdown | {on} | guest ignores SIGPWR |
 * | DELETE /sim/instances/<n>/faults | – | disarm |
 * | POST /sim/instances | {name, status, config, type} | add an instance silently |
 * | POST /sim/events/drop, /sim/events/pause, /sim/events/resume | – | event faults |
 * | POST /sim/events/storm | {count, action, name} | event storm |
 * | POST /sim/restart | {downtime_ms} | daemon restart |
 * | GET /sim/calls, DELETE /sim/calls | – | mutating call counts |
 * | POST /sim/trust | {certificate} | trust a client certificate |
 * | POST /sim/commands | {command, outcomes, instance} | script a guest command |
 * | GET /sim/commands, DELETE /sim/commands | – | scripted commands with their calls / forget them |
 * | POST /sim/http | {outcomes, instance, path, port} | script the instances' HTTP endpoint |
 * | GET /sim/http, DELETE /sim/http | – | HTTP scripts with their calls / forget them |
 * | GET /sim/instances/<n>/http-calls | query path, port | requests its endpoint received |
 * | GET /sim/instances/<n>/address | – | its address (listened on from now on) |
 * | GET /sim/guest-network | – | guest ports and failed listens |
 * | GET /sim/terminals | – | running interactive execs: whether each waits for its terminal |
 * | POST /sim/members/<m>/down, /sim/members/<m>/up | – | member Offline / Online (cluster mode) |
 * | POST /sim/members/<m>/evacuate, /sim/members/<m>/restore | – | evacuate / restore at once (cluster mode) |
 * | POST /sim/instances/<n>/move | {target} | move to another member at once (cluster mode) |
 */
export function registerControl(router: Router, controls: SimulatorControls): void {
  const ref = (req: SimRequest): { project: string } => ({ project: req.info.project });
  const body = (req: SimRequest): Record<string, unknown> => {
    const b = req.body ?? {};
    if (typeof b !== 'object' || Array.isArray(b)) throw new SimHttpError(400, 'Request body must be a JSON object');
    return b as Record<string, unknown>;
  };
  const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  const name = (req: SimRequest): string => req.params.name!;

  router.on('POST', '/sim/instances/:name/crash', (req) => (controls.crash(name(req), ref(req)), sync({})));
  router.on('POST', '/sim/instances/:name/error', (req) => (controls.setError(name(req), ref(req)), sync({})));
  router.on('POST', '/sim/instances/:name/ready', (req) => (controls.setReady(name(req), ref(req)), sync({})));
  router.on('POST', '/sim/instances/:name/fail-next', (req) => {
    const b = body(req);
    controls.failNext(name(req), num(b.count, 1), typeof b.err === 'string' ? b.err : undefined, ref(req));
    return sync({});
  });
  router.on('POST', '/sim/instances/:name/hang-next', (req) => (controls.hangNext(name(req), num(body(req).count, 1), ref(req)), sync({})));
  router.on('POST', '/sim/instances/:name/crash-loop', (req) => {
    const b = body(req);
    controls.crashLoop(name(req), typeof b.uptime_ms === 'number' ? b.uptime_ms : undefined, ref(req));
    return sync({});
  });
  router.on('DELETE', '/sim/instances/:name/crash-loop', (req) => (controls.crashLoop(name(req), false, ref(req)), sync({})));
  router.on('POST', '/sim/instances/:name/fail-next-start', (req) => (controls.failNextStart(name(req), ref(req)), sync({})));
  router.on(
    'POST',
    '/sim/instances/:name/ignore-shutdown',
    (req) => (controls.ignoreShutdown(name(req), body(req).on !== false, ref(req)), sync({})),
  );
  router.on('DELETE', '/sim/instances/:name/faults', (req) => (controls.clearFaults(name(req), ref(req)), sync({})));
  router.on('POST', '/sim/instances', (req) => {
    const b = body(req);
    if (typeof b.name !== 'string') throw new SimHttpError(400, 'name is required');
    controls.addInstance({ ...(b as { name: string }), project: req.info.project });
    return sync({});
  });
  router.on('POST', '/sim/events/drop', () => (controls.dropEventSockets(), sync({})));
  router.on('POST', '/sim/events/pause', () => (controls.pauseEvents(), sync({})));
  router.on('POST', '/sim/events/resume', () => (controls.resumeEvents(), sync({})));
  router.on('POST', '/sim/freeze', () => (controls.freeze(), sync({})));
  router.on('POST', '/sim/thaw', () => (controls.thaw(), sync({})));
  router.on('POST', '/sim/events/storm', (req) => {
    const b = body(req);
    controls.storm(num(b.count, 100), {
      action: typeof b.action === 'string' ? b.action : undefined,
      name: typeof b.name === 'string' ? b.name : undefined,
      project: req.info.project,
    });
    return sync({});
  });
  router.on('POST', '/sim/restart', (req) => {
    // Answer first: the restart closes this very connection.
    setTimeout(() => void controls.restart(num(body(req).downtime_ms, 100)), 10).unref();
    return sync({});
  });
  const member = (req: SimRequest): string => req.params.member!;
  router.on('POST', '/sim/members/:member/down', (req) => (controls.memberDown(member(req)), sync({})));
  router.on('POST', '/sim/members/:member/up', (req) => (controls.memberUp(member(req)), sync({})));
  router.on('POST', '/sim/members/:member/evacuate', (req) => (controls.evacuate(member(req)), sync({})));
  router.on('POST', '/sim/members/:member/restore', (req) => (controls.restore(member(req)), sync({})));
  router.on('POST', '/sim/instances/:name/move', (req) => {
    const target = body(req).target;
    if (typeof target !== 'string') throw new SimHttpError(400, 'target is required');
    controls.move(name(req), target, ref(req));
    return sync({});
  });
  router.on('POST', '/sim/commands', (req) => {
    const b = body(req);
    if (typeof b.command !== 'string') throw new SimHttpError(400, 'command is required');
    controls.scriptCommand({
      command: b.command,
      outcomes: Array.isArray(b.outcomes) ? (b.outcomes as CommandOutcome[]) : [],
      ...(typeof b.instance === 'string' ? { instance: b.instance, project: req.info.project } : {}),
    });
    return sync({});
  });
  router.on('GET', '/sim/commands', () => sync(controls.scriptedCommands()));
  router.on('DELETE', '/sim/commands', () => (controls.clearScriptedCommands(), sync({})));
  router.on('POST', '/sim/http', (req) => {
    const b = body(req);
    controls.scriptHttp({
      outcomes: Array.isArray(b.outcomes) ? (b.outcomes as HttpOutcome[]) : [],
      ...(typeof b.instance === 'string' ? { instance: b.instance, project: req.info.project } : {}),
      ...(b.path !== undefined ? { path: b.path as string } : {}),
      ...(b.port !== undefined ? { port: b.port as number } : {}),
    });
    return sync({});
  });
  router.on('GET', '/sim/http', () => sync(controls.httpScripts()));
  router.on('DELETE', '/sim/http', () => (controls.clearHttpScripts(), sync({})));
  router.on('GET', '/sim/instances/:name/http-calls', (req) => {
    const q = req.info.query;
    const port = q.get('port');
    return sync(controls.httpCalls(name(req), { ...ref(req), path: q.get('path') ?? undefined, port: port === null ? undefined : Number(port) }));
  });
  router.on('GET', '/sim/instances/:name/address', (req) => sync({ address: controls.guestAddress(name(req), ref(req)) }));
  router.on('GET', '/sim/terminals', () => sync(controls.terminals()));
  router.on('GET', '/sim/guest-network', () => {
    const g = controls.guestNetwork();
    return sync({ ports: g.ports, listen_errors: g.listenErrors });
  });
  router.on('GET', '/sim/calls', () => sync(controls.callCounts()));
  router.on('GET', '/sim/calls/history', (req) => sync(controls.callHistory(Number(req.info.query.get('since') ?? 0) || 0)));
  router.on('DELETE', '/sim/calls', () => (controls.resetCalls(), sync({})));
  router.on('POST', '/sim/trust', (req) => {
    const cert = body(req).certificate;
    if (typeof cert !== 'string') throw new SimHttpError(400, 'certificate is required');
    return sync({ fingerprint: controls.trust(cert) });
  });
}
