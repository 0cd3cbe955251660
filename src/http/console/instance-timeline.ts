import type { StoredAuditRecord } from '../../audit/audit-log.js';
import { isKnownStatusCode, statusText } from '../../client/status-code.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';
import type { ProbeStatus } from '../../probes/probe-status.js';
import type { Execution } from './executions.js';
import { triageWords } from '../../alerts/triage.js';
import { triageChangeOf } from './incident-story.js';

/** One stretch of time in one status. */
export interface StatusSpan {
  status: string;
  statusCode: number;
  /** ISO; the first span of a range may start before it (the status the range opened in). */
  from: string;
  /** ISO; absent while it lasts. */
  to?: string;
  /** Why it changed to this status (requested, unrequested, self, unknown, failed-start). */
  intent?: string;
}

/** A mark on the timeline: something Reflex or an operator did, an incident, or a probe's transition. */
export interface TimelineMark {
  at: string;
  kind: 'incident' | 'reflex' | 'operator' | 'housekeeping' | 'health';
  text: string;
  correlationId: string;
  result?: string;
  /** A `health` mark: what the probe concluded, and the last check's output and duration. */
  health?: 'healthy' | 'unhealthy';
  probe?: string;
  output?: string;
  durationMs?: number;
}

/** An instance's status over a range with what was done to it. */
export interface InstanceTimeline {
  instance: string;
  from: string;
  to: string;
  spans: StatusSpan[];
  marks: TimelineMark[];
  /** Its probes' state now (streaks, last check and output); empty when no probe covers it. */
  probes: ProbeStatus[];
}

const textOf = (code: number) => (isKnownStatusCode(code) ? statusText(code) : `status ${code}`);
const eventOf = (r: StoredAuditRecord) => (r as { event?: CanonicalEvent }).event;

/**
 * The status of `instance` over [from, to] from the audit log's `event` records (every status
 * event Reflex received is recorded, with its daemon time), and the executions on it as marks:
 * Reflex's (rules), housekeeping's and operators' (the incidents' triage among them), and its probes' transitions (`instance.health`)
 * with their output; `probes` is its probes' state now. `records` may hold the whole log of the range and
 * more before it: the status at `from` is the last change before it.
 */
export function instanceTimeline(
  records: StoredAuditRecord[],
  executions: Execution[],
  incidents: { correlationId: string; instance: string; at: string; kind: string }[],
  instance: string,
  from: number,
  to: number,
  probes: ProbeStatus[] = [],
): InstanceTimeline {
  const changes: { at: number; code: number; intent?: string }[] = [];
  const marks: TimelineMark[] = [];
  const within = (at: string) => Date.parse(at) >= from && Date.parse(at) <= to;
  for (const r of records) {
    const triage = r.instance === instance && within(r.at) ? triageChangeOf(r) : undefined;
    if (triage) {
      const actor = (r as { actor?: unknown }).actor;
      marks.push({
        at: r.at,
        kind: 'operator',
        text: `${typeof actor === 'string' ? actor : 'operator'}: ${triageWords(triage)}`,
        correlationId: r.correlationId,
      });
    }
    if (r.type !== 'event' || r.summary.startsWith('stale:')) continue;
    const e = eventOf(r);
    if (e?.kind === 'instance.health' && e.instance === instance && within(e.timestamp)) marks.push(healthMark(e, r.correlationId));
    if (!e || e.kind !== 'instance.status' || e.instance !== instance) continue;
    changes.push({ at: Date.parse(e.timestamp), code: e.to, intent: e.intent });
  }
  changes.sort((a, b) => a.at - b.at);
  const spans: StatusSpan[] = [];
  for (const c of changes) {
    if (c.at > to) break;
    const last = spans.at(-1);
    if (last && last.statusCode === c.code) continue; // confirmed again: the same stretch
    if (last) last.to = new Date(c.at).toISOString();
    spans.push({ status: textOf(c.code), statusCode: c.code, from: new Date(c.at).toISOString(), ...(c.intent ? { intent: c.intent } : {}) });
  }
  // Stretches that ended before the range are not shown; the one the range opened in is.
  const inRange = spans.filter((s) => !s.to || Date.parse(s.to) >= from);
  for (const i of incidents)
    if (i.instance === instance && within(i.at)) marks.push({ at: i.at, kind: 'incident', text: i.kind, correlationId: i.correlationId });
  for (const e of executions) {
    if (e.instance !== instance || !within(e.startedAt)) continue;
    const who = e.source === 'operator' ? `${e.actor ?? 'operator'}: ` : `${e.by}: `;
    marks.push({
      at: e.startedAt,
      kind: e.source === 'operator' ? 'operator' : e.source === 'schedule' ? 'housekeeping' : 'reflex',
      text: `${who}${e.action} → ${e.result}`,
      correlationId: e.correlationId,
      result: e.result,
    });
  }
  marks.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { instance, from: new Date(from).toISOString(), to: new Date(to).toISOString(), spans: inRange, marks, probes };
}

/** A probe's transition as a mark: `probe web: healthy → unhealthy after 3 exec checks`, with the last check's output. */
function healthMark(e: Extract<CanonicalEvent, { kind: 'instance.health' }>, correlationId: string): TimelineMark {
  return {
    at: new Date(Date.parse(e.timestamp)).toISOString(),
    kind: 'health',
    text: `probe ${e.probe}: ${e.previous} → ${e.health} after ${e.consecutive} ${e.check} check${e.consecutive === 1 ? '' : 's'} in a row`,
    correlationId,
    health: e.health,
    probe: e.probe,
    output: e.output,
    durationMs: e.durationMs,
  };
}
