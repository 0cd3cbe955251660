/**
 * The console API's answers as the browser reads them (JSON: times are ISO strings or epoch ms as
 * the server sends them). Only what the page uses is declared; the server's own types are in
 * ../fleet-view.ts, ../incident-story.ts and ../console-health.ts.
 */

/** The page's settings, written into the page by the server before the script runs. */
export interface ConsoleSettings {
  /** The console's API path (`/dashboard/console`). */
  api: string;
  /** A write token or an operator is configured: the actions are offered. */
  writable: boolean;
  /** `users`: each operator's own token (the server knows the name); `token`: the shared write token and a typed name. */
  identity: 'users' | 'token';
  /** The user signed in with a session (the login page, `?token=`): actions need no token typed in. */
  signedIn?: { name: string; role: string };
}

/** One instance of `GET /fleet`. */
export interface FleetRow {
  key: string;
  target: string;
  project: string;
  name: string;
  location?: string;
  statusCode: number;
  status: string;
  since?: number;
  intent?: string;
  statusFrom?: 'list';
  optIn?: boolean;
  backoffUntil?: string;
  quarantined?: { since: string; until?: string };
  silenced?: { id: string; reason: string; until: string };
  acting: boolean;
  restarts: number;
  health: 'healthy' | 'unhealthy' | 'unknown' | 'none';
  probes?: { probe: string; health: string }[];
}

/** `GET /fleet`: one page of the fleet and the counts. */
export interface FleetPage {
  total: number;
  matched: number;
  offset: number;
  rows: FleetRow[];
  counts: Record<string, number>;
  targets: string[];
  projects: string[];
  members: string[];
}

/** One incident of `GET /incidents`. */
export interface Incident {
  correlationId: string;
  kind: string;
  instance: string;
  at: string;
  outcome?: { result: string };
  healMs?: number;
  story: string;
  decided?: { rule?: string };
  /** A crash loop: the earlier incidents of the episode inside, newest first. */
  loop?: { count: number; firstAt: string; incidents: { correlationId: string; kind: string; at: string; story: string; healMs?: number }[] };
  /** Acknowledged, assigned, annotated by the people on call. */
  triage?: Triage;
}

/** An incident's triage (alerts/triage.ts). */
export interface Triage {
  acknowledged?: { by: string; at: string };
  assignee?: { name: string; by: string; at: string };
  notes: { by: string; at: string; text: string }[];
}

/** `GET /assignees`: whom an incident may be assigned to, and whether other names are taken too. */
export interface Assignees {
  names: string[];
  open: boolean;
}

/** The plots of `GET /incidents`. */
export interface Plots {
  from: string;
  to: string;
  bucketMs: number;
  timeline: { start: string; incidents: number; remediations: number; housekeeping: number }[];
  heal: { label: string; count: number }[];
  unhealed: number;
}

/** A firing alert, as the notifier holds it. */
export interface FiringAlert {
  severity: string;
  kind: string;
  project: string;
  instance: string;
  summary: string;
  startsAt: string;
  correlationId: string;
  /** What Reflex did about it, in order. */
  actions: { action: string; result: string; summary?: string }[];
  outcome?: string;
}

/** An active silence. */
export interface Silence {
  id: string;
  scope: Record<string, string>;
  reason: string;
  createdBy: string;
  origin?: string;
  until: string;
}

/** `GET /incidents`: the incidents of the range, their plots, the alerts and the silences. */
export interface IncidentsAnswer {
  /** The rules that decided an incident in the range (the rule filter's choices). */
  rules: string[];
  incidents: Incident[];
  total: number;
  plots: Plots;
  restarts: { name: string; restarts: number }[];
  /** Absent when notifications are not configured (or this replica runs no worker). */
  alerts?: { firing: FiringAlert[]; groups: { receiver: string; alerts: unknown[]; nextFlushAt?: string }[] };
  silences: Silence[];
  truncated: boolean;
}

/** One audit record of `GET /trail`. */
export interface TrailRecord {
  at: string;
  type: string;
  rule?: string;
  result?: string;
  summary?: string;
}

/** `GET /health`: /readyz's checks and the first metrics. */
export interface Health {
  checks: Record<string, { ok: boolean; detail: string }>;
  streams: { target: string; connected: boolean; leaseHolder: boolean; buffered: number }[];
  lag: { meanMs?: number; count: number };
  queues: Record<string, Record<string, number>>;
  deadLetters: number;
}

/** `GET /dlq`: the dead letters. */
export interface DeadLetters {
  jobs: { id: string; instance: string; rule: string; action: string; failedAt: string | null; reason: string }[];
}

/** `GET /silences/preview`: what a silence would cover now. */
export interface SilencePreview {
  matches: number;
  names: string[];
  reasonNeeded: boolean;
}

/** What a write answers (one of these, by the action), or `error`. */
export interface WriteAnswer {
  error?: string;
  released?: boolean;
  jobId?: string;
  retried?: string;
  ended?: string;
  id?: string;
  until?: string;
  /** A triage step, in words. */
  triaged?: string;
  /** An approval decided, in words. */
  decided?: string;
}

/** One approval of `GET /approvals` (../approval-routes.ts): a rule's actions waiting for a decision, or decided lately. */
export interface ApprovalView {
  id: string;
  status: 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';
  settled: boolean;
  rule: string;
  target: string;
  project: string;
  instance: string;
  location?: string;
  correlationId: string;
  summary: string;
  actions: string[];
  /** The least role that may decide. */
  role: 'operator' | 'admin';
  requestedAt: string;
  expiresAt: string;
  decision?: { at: string; actor?: string; origin?: string; reason?: string };
}

/** `GET /approvals`: the waiting (oldest first), then the recently decided (newest first). */
export interface ApprovalsAnswer {
  approvals: ApprovalView[];
}

/** One execution of `GET /executions`: an action Reflex ran, from the audit log. */
export interface Execution {
  id: string;
  correlationId: string;
  source: 'rule' | 'schedule' | 'operator';
  by: string;
  actor?: string;
  origin?: string;
  action: string;
  target?: string;
  project?: string;
  instance?: string;
  params: string[];
  result: string;
  summary: string;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  attempts: number;
  rerun: boolean;
}

/** `GET /executions`: a page of the executions of the range. */
export interface ExecutionsAnswer {
  from: string;
  to: string;
  total: number;
  matched: number;
  offset: number;
  executions: Execution[];
  actions: string[];
  truncated: boolean;
}

/** `GET /timeline`: an instance's status over the range, with what was done to it. */
export interface InstanceTimeline {
  instance: string;
  from: string;
  to: string;
  spans: { status: string; statusCode: number; from: string; to?: string; intent?: string }[];
  marks: {
    at: string;
    kind: 'incident' | 'reflex' | 'operator' | 'housekeeping' | 'health';
    text: string;
    correlationId: string;
    result?: string;
    health?: 'healthy' | 'unhealthy';
    output?: string;
    durationMs?: number;
  }[];
  probes: ProbeState[];
}

/** One probe of an instance as last checked (`reflex probes status`). */
export interface ProbeState {
  target: string;
  project: string;
  instance: string;
  probe: string;
  health: 'healthy' | 'unhealthy' | 'unknown';
  failures: number;
  successes: number;
  lastAt?: string;
  lastOutcome?: string;
  lastOutput?: string;
  changedAt?: string;
}
