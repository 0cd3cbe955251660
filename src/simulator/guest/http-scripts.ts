import { SimHttpError } from '../envelope.js';

/** What the guest's endpoint does with one request (or, with `refuse`, with its port). */
export interface HttpOutcome {
  /** The HTTP status. Default 200. */
  status?: number;
  /** The body (text/plain). Default empty. */
  body?: string;
  /** Answers this long after the request. Default 0. */
  delayMs?: number;
  /** Never answers: the connection stays open until the client gives up, the instance stops or the simulator closes. */
  hang?: boolean;
  /** Resets the connection (TCP RST) without an answer. */
  reset?: boolean;
  /**
   * The port is closed: connections are refused (http and tcp checks fail). Nothing reaches a
   * refused port, so nothing is counted and the outcome holds until the script is replaced or
   * cleared: it may only be the last outcome, of a script without `path`.
   */
  refuse?: boolean;
}

/**
 * What an instance's HTTP endpoint answers, per request, in every instance or one: like a
 * scripted command (scripted-commands.ts), the outcomes of the first request, the second, …, the last one repeating,
 * counted per instance.
 */
export interface HttpScript {
  /** Only in this instance (every instance when absent). */
  instance?: string;
  /** The instance's project. Default `default`. */
  project?: string;
  /** Only requests for this path (the query string ignored); every path when absent. */
  path?: string;
  /** Only this guest port; every guest port when absent. */
  port?: number;
  /** At least one. */
  outcomes: HttpOutcome[];
}

interface Registered {
  script: HttpScript & { project: string };
  /** Requests answered, per instance ("project/name"). */
  calls: Map<string, number>;
  /** Specificity: an instance's own script over one for all, a path over any path, a port over any port. */
  rank: number;
}

/** Checks a script as a control call gives it; 400 with what is wrong. */
export function checkHttpScript(script: HttpScript): void {
  const { outcomes, path, port } = script;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) throw new SimHttpError(400, 'path must start with /');
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65_535)) throw new SimHttpError(400, 'port must be a port number');
  if (!Array.isArray(outcomes) || outcomes.length === 0) throw new SimHttpError(400, 'outcomes must list at least one outcome');
  outcomes.forEach((o, i) => {
    if (typeof o !== 'object' || o === null) throw new SimHttpError(400, 'each outcome is an object {status, body, delayMs, hang, reset, refuse}');
    if (o.status !== undefined && (!Number.isInteger(o.status) || o.status < 100 || o.status > 599))
      throw new SimHttpError(400, 'status must be an HTTP status (100-599)');
    if (o.body !== undefined && typeof o.body !== 'string') throw new SimHttpError(400, 'body must be a string');
    if (o.delayMs !== undefined && !(typeof o.delayMs === 'number' && o.delayMs >= 0)) throw new SimHttpError(400, 'delayMs must be a number ≥ 0');
    if (o.refuse && (i !== outcomes.length - 1 || path !== undefined))
      throw new SimHttpError(400, 'refuse closes the port: it may only be the last outcome, of a script without path');
  });
}

/** The HTTP scripts of one simulator. */
export class HttpScripts {
  private readonly scripts: Registered[] = [];

  /** Registers a script, replacing one for the same instance, path and port. */
  define(script: HttpScript): void {
    checkHttpScript(script);
    const project = script.project ?? 'default';
    const same = this.scripts.findIndex(
      (r) => r.script.instance === script.instance && r.script.project === project && r.script.path === script.path && r.script.port === script.port,
    );
    const rank = (script.instance !== undefined ? 4 : 0) + (script.path !== undefined ? 2 : 0) + (script.port !== undefined ? 1 : 0);
    const entry: Registered = { script: { ...script, project, outcomes: script.outcomes.map((o) => ({ ...o })) }, calls: new Map(), rank };
    if (same >= 0) this.scripts[same] = entry;
    else this.scripts.push(entry);
  }

  /** Forgets every script. */
  clear(): void {
    this.scripts.length = 0;
  }

  /** The outcome of a request for `path` on `port` of an instance, counted; undefined when no script answers it. */
  take(instanceKey: string, port: number, path: string): HttpOutcome | undefined {
    const best = this.best(instanceKey, port, path);
    if (!best) return undefined;
    const n = best.calls.get(instanceKey) ?? 0;
    best.calls.set(instanceKey, n + 1);
    return outcomeAt(best, n);
  }

  /** Whether the instance's port is closed: the script for its port (any path) is at a `refuse` outcome. */
  refuses(instanceKey: string, port: number): boolean {
    const best = this.best(instanceKey, port, undefined);
    return best ? outcomeAt(best, best.calls.get(instanceKey) ?? 0).refuse === true : false;
  }

  /** Every script with its calls per instance. */
  list(): (HttpScript & { calls: Record<string, number> })[] {
    return this.scripts.map((r) => ({ ...r.script, calls: Object.fromEntries(r.calls) }));
  }

  /** The most specific script for a request; with `path` undefined, among those for any path only. */
  private best(instanceKey: string, port: number, path: string | undefined): Registered | undefined {
    let best: Registered | undefined;
    for (const r of this.scripts) {
      const s = r.script;
      if (s.instance !== undefined && `${s.project}/${s.instance}` !== instanceKey) continue;
      if (s.port !== undefined && s.port !== port) continue;
      if (s.path !== undefined && s.path !== path) continue;
      if (!best || r.rank > best.rank) best = r;
    }
    return best;
  }
}

function outcomeAt(r: Registered, n: number): HttpOutcome {
  return r.script.outcomes[Math.min(n, r.script.outcomes.length - 1)]!;
}
