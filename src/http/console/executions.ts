import type { StoredAuditRecord } from '../../audit/audit-log.js';
import { isHousekeeping } from './incident-story.js';

/** Who started an execution: a rule on an event, a schedule's tick (housekeeping), or an operator (console, CLI). */
export type ExecutionSource = 'rule' | 'schedule' | 'operator';

/** One action Reflex ran (or was asked to run), read back from the audit log. */
export interface Execution {
  /** Stable within the log: the correlation id, the instance and the action. */
  id: string;
  correlationId: string;
  source: ExecutionSource;
  /** The rule or schedule that decided it, or `heal`, `quarantine-release`, `silence` for an operator's. */
  by: string;
  /** The operator who asked (authenticated user, or the typed name), for `operator`. */
  actor?: string;
  /** Where the operator acted from (`console`, `cli`). */
  origin?: string;
  action: string;
  target?: string;
  /** The instance's project, where the fleet knows it (filled in by the route). */
  project?: string;
  instance?: string;
  /** What it was given: the job's parameters when recorded, else the API calls it made. */
  params: string[];
  /** `done`, `failed`, `gave up`, `skipped`, `dry-run`, `running` (no outcome yet), … as the last outcome says. */
  result: string;
  summary: string;
  /** When it was queued or asked for, ISO. */
  startedAt: string;
  /** When its last outcome was recorded, ISO. */
  endedAt?: string;
  durationMs?: number;
  attempts: number;
  /** It can be run again safely from the console (an idempotent action: a start). */
  rerun: boolean;
}

/** Actions whose second run changes nothing the first did not: offered for a re-run (as an operator's heal). */
const idempotent = new Set(['start']);
const str = (r: StoredAuditRecord, f: string) => {
  const v = (r as Record<string, unknown>)[f];
  return typeof v === 'string' ? v : undefined;
};
const finalResults = new Set(['done', 'failed', 'skipped', 'dry-run', 'gave up', 'cancelled', 'superseded']);

/** The action a record is about, from how the executor words its records. */
function actionOf(r: StoredAuditRecord): string | undefined {
  if (r.type === 'action') return /^queued (\S+)/.exec(r.summary)?.[1] ?? /\(([\w.-]+)\) from the/.exec(r.summary)?.[1];
  if (r.type === 'call') return /\(([\w.-]+)\) → /.exec(r.summary)?.[1];
  if (r.type === 'give-up') return /^(\S+) on /.exec(r.summary)?.[1];
  if (r.type === 'outcome') return /^([A-Za-z][\w.-]*)(?::| failed| skipped| held| resumed)/.exec(r.summary)?.[1];
  return undefined;
}

/**
 * Every execution among audit records (oldest first), newest first: the actions rules and
 * schedules queued and ran (from their `action`, `call`, `outcome` and `give-up` records, one
 * execution per incident, instance and action), and what operators did (heals, dead-letter
 * retries, releases, silences). Nothing is stored for it: the audit log is the record.
 */
export function executionsOf(records: StoredAuditRecord[]): Execution[] {
  const byKey = new Map<string, Execution>();
  const operatorAsked = new Map<string, { actor: string; origin?: string; by: string; at: string }>();
  const out: Execution[] = [];
  for (const r of records) {
    const actor = str(r, 'actor');
    if (r.type === 'decision' && actor) operatorAsked.set(r.correlationId, { actor, origin: str(r, 'origin'), by: r.rule ?? 'operator', at: r.at });
    if (r.type === 'decision' && r.rule === 'quarantine-release' && actor) {
      out.push(operatorOnly(r, 'release', actor, 'done'));
      continue;
    }
    if (r.type === 'silence') {
      const who = /by (\S+)/.exec(r.summary)?.[1];
      out.push({ ...operatorOnly(r, `silence ${str(r, 'result') ?? ''}`.trim(), who ?? 'unknown', 'done'), by: 'silence' });
      continue;
    }
    if (!['action', 'call', 'outcome', 'give-up'].includes(r.type)) continue;
    const action = actionOf(r);
    if (!action) continue;
    const key = `${r.correlationId}|${r.target ?? ''}|${r.instance ?? ''}|${action}`;
    let e = byKey.get(key);
    // An operator's retry of a dead letter is an execution of its own, of the same action.
    const retriedBy = r.type === 'action' && actor ? actor : undefined;
    if (!e || retriedBy) {
      const asked = operatorAsked.get(r.correlationId);
      const source: ExecutionSource = retriedBy || asked ? 'operator' : isHousekeeping(r) || str(r, 'schedule') ? 'schedule' : 'rule';
      e = {
        id: `${key}|${r.id}`,
        correlationId: r.correlationId,
        source,
        by: retriedBy ? `retry of ${r.rule ?? 'a dead letter'}` : (asked?.by ?? r.rule ?? '?'),
        ...(retriedBy ? { actor: retriedBy, origin: str(r, 'origin') } : asked ? { actor: asked.actor, origin: asked.origin } : {}),
        action,
        target: r.target,
        instance: r.instance,
        params: [],
        result: 'queued',
        summary: r.summary,
        startedAt: !retriedBy && asked ? asked.at : r.at,
        attempts: 0,
        rerun: false,
      };
      byKey.set(key, e);
      out.push(e);
    }
    const params = (r as { params?: unknown }).params ?? (r as { plan?: unknown }).plan;
    if (params && typeof params === 'object' && Object.keys(params).length) e.params.push(JSON.stringify(params));
    if (r.type === 'call') {
      const method = str(r, 'method');
      const path = str(r, 'path');
      if (method && path && !e.params.includes(`${method} ${path}`)) e.params.push(`${method} ${path}`);
      if (e.result === 'queued') e.result = 'running';
    }
    if (r.type === 'outcome' || r.type === 'give-up') {
      const result = r.type === 'give-up' ? 'gave up' : (str(r, 'result') ?? 'ended');
      e.attempts = Math.max(e.attempts + 1, Number((r as { attempt?: unknown }).attempt) || 0);
      e.result = result;
      e.summary = r.summary;
      if (finalResults.has(result) || result === 'gave up') {
        e.endedAt = r.at;
        e.durationMs = Math.max(0, Date.parse(r.at) - Date.parse(e.startedAt));
      }
    }
  }
  for (const e of out) e.rerun = idempotent.has(e.action) && !!e.instance && !!e.target && e.source !== 'schedule';
  return out.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
}

function operatorOnly(r: StoredAuditRecord, action: string, actor: string, result: string): Execution {
  return {
    id: `${r.correlationId}|${r.id}`,
    correlationId: r.correlationId,
    source: 'operator',
    by: r.rule ?? 'operator',
    actor,
    origin: str(r, 'origin'),
    action,
    target: r.target,
    instance: r.instance,
    params: [],
    result,
    summary: r.summary,
    startedAt: r.at,
    endedAt: r.at,
    durationMs: 0,
    attempts: 1,
    rerun: false,
  };
}

/** How the executions view narrows the list. */
export interface ExecutionFilter {
  source?: string;
  action?: string;
  result?: string;
  /** A name, or part of one. */
  instance?: string;
  /** The rule, schedule or operator (actor), or part of one. */
  by?: string;
}

/** The executions `f` asks for. */
export function filterExecutions(all: Execution[], f: ExecutionFilter): Execution[] {
  const has = (v: string | undefined, part: string | undefined) => !part || (v ?? '').toLowerCase().includes(part.toLowerCase());
  return all.filter(
    (e) =>
      (!f.source || e.source === f.source) &&
      (!f.action || e.action === f.action) &&
      (!f.result || (f.result === 'failed' ? ['failed', 'gave up'].includes(e.result) : e.result === f.result)) &&
      has(e.instance, f.instance) &&
      (has(e.by, f.by) || has(e.actor, f.by)),
  );
}
