import type { StoredAuditRecord } from '../../audit/audit-log.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';
import { applyTriage, type Triage, type TriageChange } from '../../alerts/triage.js';

/** What kind of trouble opened an incident. */
export type IncidentKind = 'crash' | 'error' | 'failed-operation' | 'unknown-stop' | 'failed-start';

/** One step of an incident's story: when, and what the audit record says. */
export interface StoryStep {
  at: string;
  /** Since the event happened (daemon time), ms. */
  afterMs: number;
  summary: string;
  /** The audit record's stream id. */
  id: string;
}

/** One incident: the event that opened it and what Reflex did about it, from one correlation id. */
export interface Incident {
  correlationId: string;
  kind: IncidentKind;
  target: string;
  project: string;
  instance: string;
  location: string;
  /** When it happened, daemon time, ISO. */
  at: string;
  detected: StoryStep;
  decided?: StoryStep & { rule?: string; matched: boolean };
  acted?: StoryStep;
  outcome?: StoryStep & { result: string };
  /** From the event to the outcome `done` of a start or restart: the instance is back. */
  healMs?: number;
  /** detected → decided → acted → outcome, with durations, on one line. */
  story: string;
  /** Acknowledged, assigned, annotated by the people on call (its `triage` records); of a crash loop, of every incident in it. */
  triage?: Triage;
  /**
   * A crash loop: the earlier incidents of the same instance in one episode (each within
   * {@link episodeGapMs} of the next), newest first; this incident is the episode's newest.
   */
  loop?: { count: number; firstAt: string; incidents: Pick<Incident, 'correlationId' | 'kind' | 'at' | 'story' | 'healMs'>[] };
}

/** The event of an `event` record when it opens an incident, and which kind. */
export function incidentKind(event: CanonicalEvent | undefined): IncidentKind | undefined {
  if (!event) return undefined;
  if (event.kind === 'instance.status') {
    if (event.to === 112) return 'error';
    if (event.to === 102 && event.intent === 'unrequested') return 'crash';
    if (event.to === 102 && event.intent === 'unknown') return 'unknown-stop';
    if (event.to === 102 && event.intent === 'failed-start') return 'failed-start';
    return undefined;
  }
  if (event.kind === 'operation.status' && event.to === 400) return 'failed-operation';
  return undefined;
}

const eventOf = (r: StoredAuditRecord) => (r as { event?: CanonicalEvent }).event;
const str = (r: StoredAuditRecord, field: string) => {
  const v = (r as Record<string, unknown>)[field];
  return typeof v === 'string' ? v : undefined;
};

/** `350 ms`, `2.4 s`, `3 min 5 s`, `1 h 20 min`. */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

const kindText: Record<IncidentKind, string> = {
  crash: 'crashed',
  error: 'went to Error',
  'failed-operation': 'operation failed',
  'unknown-stop': 'stopped (cause unknown)',
  'failed-start': 'failed to start (never ran)',
};

/**
 * The story of one correlation id's records (oldest first), or undefined when its first event is
 * not an incident (an operator's stop, a start, a stale event).
 */
export function incidentOf(records: StoredAuditRecord[]): Incident | undefined {
  const opening = records.find((r) => r.type === 'event');
  const event = opening && eventOf(opening);
  const kind = incidentKind(event);
  if (!opening || !event || !kind || opening.summary.startsWith('stale:')) return undefined;
  const t0 = Date.parse(event.timestamp);
  const step = (r: StoredAuditRecord): StoryStep => ({ at: r.at, afterMs: Date.parse(r.at) - t0, summary: r.summary, id: r.id });
  const decisions = records.filter((r) => r.type === 'decision');
  const decision =
    decisions.find((r) => (r as { matched?: boolean }).matched) ?? decisions.find((r) => !r.summary.startsWith('skipped')) ?? decisions[0];
  const call = records.find((r) => r.type === 'call') ?? records.find((r) => r.type === 'action');
  const ends = records.filter((r) => r.type === 'outcome' || r.type === 'give-up');
  const end = ends.at(-1);
  const instance =
    'instance' in event && typeof event.instance === 'string'
      ? event.instance
      : (opening.instance ?? (event.kind === 'operation.status' ? event.instances[0] : undefined) ?? '');
  const incident: Incident = {
    correlationId: opening.correlationId,
    kind,
    target: event.target,
    project: event.project,
    instance,
    location: event.location,
    at: new Date(t0).toISOString(),
    detected: step(opening),
    ...(decision ? { decided: { ...step(decision), rule: decision.rule, matched: !!(decision as { matched?: boolean }).matched } } : {}),
    ...(call ? { acted: step(call) } : {}),
    ...(end ? { outcome: { ...step(end), result: end.type === 'give-up' ? 'gave up' : (str(end, 'result') ?? 'ended') } } : {}),
    story: '',
  };
  const triage = triageOf(records);
  if (triage) incident.triage = triage;
  const healed = ends.find((r) => str(r, 'result') === 'done' && /^(start|restart)\b/.test(r.summary));
  if (healed) incident.healMs = Date.parse(healed.at) - t0;
  incident.story = storyLine(incident, decisions.length);
  return incident;
}

/** The triage step a `triage` record made, or undefined when the record is not one. */
export function triageChangeOf(r: StoredAuditRecord): TriageChange | undefined {
  if (r.type !== 'triage') return undefined;
  const what = str(r, 'triage');
  if (what === 'ack') return { ack: true };
  if (what === 'assign' && str(r, 'assignee')) return { assign: str(r, 'assignee')! };
  if (what === 'note' && str(r, 'note') !== undefined) return { note: str(r, 'note')! };
  return undefined;
}

/** The triage of an incident's records (oldest first), replayed; undefined when none was triaged. */
export function triageOf(records: StoredAuditRecord[]): Triage | undefined {
  let triage: Triage | undefined;
  for (const r of records) {
    const change = triageChangeOf(r);
    if (change) triage = applyTriage(triage, change, str(r, 'actor') ?? 'unknown', r.at) ?? triage;
  }
  return triage;
}

/** Two incidents' triage as one (a crash loop's): the first acknowledgement, the last assignment, every note in time order. */
export function mergeTriage(a: Triage | undefined, b: Triage | undefined): Triage | undefined {
  if (!a || !b) return a ?? b;
  const first = <T extends { at: string }>(x?: T, y?: T) => (!x ? y : !y ? x : x.at <= y.at ? x : y);
  const last = <T extends { at: string }>(x?: T, y?: T) => (!x ? y : !y ? x : x.at > y.at ? x : y);
  const acknowledged = first(a.acknowledged, b.acknowledged);
  const assignee = last(a.assignee, b.assignee);
  return {
    ...(acknowledged ? { acknowledged } : {}),
    ...(assignee ? { assignee } : {}),
    notes: [...a.notes, ...b.notes].sort((x, y) => x.at.localeCompare(y.at)),
    revision: a.revision + b.revision,
  };
}

function storyLine(i: Incident, decisions: number): string {
  const parts = [`${i.project}/${i.instance} ${kindText[i.kind]}`, `detected +${durationText(i.detected.afterMs)}`];
  if (i.decided)
    parts.push(
      `decided${i.decided.rule ? ` ${i.decided.rule}` : ''}: ${i.decided.summary} +${durationText(i.decided.afterMs)}${decisions > 1 ? ` (${decisions} rules)` : ''}`,
    );
  else parts.push('no rule decided');
  if (i.acted) parts.push(`acted: ${i.acted.summary} +${durationText(i.acted.afterMs)}`);
  if (i.outcome) parts.push(`${i.outcome.result}: ${i.outcome.summary} +${durationText(i.outcome.afterMs)}`);
  else if (i.acted) parts.push('outcome pending');
  return parts.join(' → ');
}

/**
 * The incidents among audit records (oldest first), newest first. Records of one correlation id
 * are grouped; only ids whose first event opens an incident count.
 */
export function incidentsOf(records: StoredAuditRecord[]): Incident[] {
  const groups = new Map<string, StoredAuditRecord[]>();
  for (const r of records) {
    let g = groups.get(r.correlationId);
    if (!g) groups.set(r.correlationId, (g = []));
    g.push(r);
  }
  const out: Incident[] = [];
  for (const g of groups.values()) {
    const i = incidentOf(g);
    if (i) out.push(i);
  }
  return out.sort((a, b) => b.at.localeCompare(a.at));
}

/** A record of a schedule's run (housekeeping), not of a remediation. */
export const isHousekeeping = (r: StoredAuditRecord): boolean => r.correlationId.startsWith('schedule:') || str(r, 'origin') === 'schedule';

/** Incidents of one instance closer than this to each other are one episode (a crash loop). */
export const episodeGapMs = 15 * 60_000;
const loopKinds = new Set<IncidentKind>(['crash', 'failed-start', 'unknown-stop']);

/**
 * Groups a crash loop into one incident: crashes (and failed starts, unknown stops) of the same
 * instance each within {@link episodeGapMs} of the one before are shown as the newest of them, with
 * the others inside (`loop`). Takes and answers newest first.
 */
export function episodesOf(incidents: Incident[]): Incident[] {
  const open = new Map<string, Incident>();
  const out: Incident[] = [];
  for (const i of [...incidents].reverse()) {
    const key = `${i.target}|${i.project}/${i.instance}`;
    const last = open.get(key);
    const lastAt = last ? Date.parse(last.at) : 0;
    if (last && loopKinds.has(i.kind) && loopKinds.has(last.kind) && Date.parse(i.at) - lastAt <= episodeGapMs) {
      const inner = [
        { correlationId: last.correlationId, kind: last.kind, at: last.at, story: last.story, healMs: last.healMs },
        ...(last.loop?.incidents ?? []),
      ];
      const grouped: Incident = { ...i, loop: { count: inner.length + 1, firstAt: last.loop?.firstAt ?? last.at, incidents: inner } };
      const triage = mergeTriage(last.triage, i.triage);
      if (triage) grouped.triage = triage;
      out[out.indexOf(last)] = grouped;
      open.set(key, grouped);
      continue;
    }
    out.push(i);
    open.set(key, i);
  }
  return out.reverse();
}

/** How the console narrows the incidents list. */
export interface IncidentFilter {
  /** An incident kind, or `crash-loop` (an episode of more than one). */
  kind?: string;
  /** `healed`, `failed` (ended without healing), `open` (no outcome yet). */
  outcome?: string;
  /** The rule that decided. */
  rule?: string;
}

/** The incidents `f` asks for. */
export function filterIncidents(incidents: Incident[], f: IncidentFilter): Incident[] {
  return incidents.filter((i) => {
    if (f.kind && (f.kind === 'crash-loop' ? !i.loop : i.kind !== f.kind)) return false;
    if (f.rule && i.decided?.rule !== f.rule) return false;
    if (f.outcome === 'healed' && i.healMs === undefined) return false;
    if (f.outcome === 'failed' && (i.healMs !== undefined || !i.outcome)) return false;
    if (f.outcome === 'open' && i.outcome) return false;
    return true;
  });
}

/** The plots' data over a time range. */
export interface Plots {
  from: string;
  to: string;
  bucketMs: number;
  /**
   * Per time bucket, oldest first: incidents, remediations (outcomes `done` of rules and operators)
   * and housekeeping (outcomes `done` of schedules: snapshots, pruning), counted apart.
   */
  timeline: { start: string; incidents: number; remediations: number; housekeeping: number }[];
  /** Incidents healed by time to heal. */
  heal: { label: string; upToMs: number; count: number }[];
  /** Incidents never healed in the range (no `done` start or restart). */
  unhealed: number;
}

const healBins = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000, 1_800_000, Infinity];
const binLabel = (ms: number) => (ms === Infinity ? '> 30 min' : `≤ ${durationText(ms).replace(' 0 s', '')}`);

/** Timeline (about `buckets` buckets) and time-to-heal distribution over [from, to]. */
export function plotsOf(records: StoredAuditRecord[], incidents: Incident[], from: number, to: number, buckets = 48): Plots {
  const bucketMs = Math.max(1_000, Math.ceil((to - from) / buckets / 1_000) * 1_000);
  const n = Math.max(1, Math.ceil((to - from) / bucketMs));
  const timeline = Array.from({ length: n }, (_, k) => ({
    start: new Date(from + k * bucketMs).toISOString(),
    incidents: 0,
    remediations: 0,
    housekeeping: 0,
  }));
  const slot = (ms: number) => Math.floor((ms - from) / bucketMs);
  for (const i of incidents) {
    const k = slot(Date.parse(i.at));
    if (k >= 0 && k < n) timeline[k]!.incidents++;
  }
  for (const r of records) {
    if (r.type !== 'outcome' || str(r, 'result') !== 'done') continue;
    const k = slot(Date.parse(r.at));
    if (k < 0 || k >= n) continue;
    if (isHousekeeping(r)) timeline[k]!.housekeeping++;
    else timeline[k]!.remediations++;
  }
  const heal = healBins.map((upToMs) => ({ label: binLabel(upToMs), upToMs: upToMs === Infinity ? -1 : upToMs, count: 0 }));
  let unhealed = 0;
  for (const i of incidents) {
    if (i.healMs === undefined) {
      unhealed++;
      continue;
    }
    heal[healBins.findIndex((b) => i.healMs! <= b)]!.count++;
  }
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucketMs, timeline, heal, unhealed };
}
