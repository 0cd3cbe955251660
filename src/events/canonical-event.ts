import { z } from 'zod';

/**
 * Why an instance changed state: `requested` by a user or tool through the API, `unrequested`
 * (crash, guest shutdown), `self` (Reflex's own action), `unknown` (e.g. seen only by a resync),
 * `failed-start` (the stop the daemon reports after someone's start or launch failed: the instance
 * never ran, so it is not a crash).
 */
export const intentSchema = z.enum(['requested', 'unrequested', 'self', 'unknown', 'failed-start']);

/** The start (or launch: a create that starts) whose failure a `failed-start` stop follows. */
export const startFailureSchema = z.object({
  /** The daemon's operation that failed. */
  operationId: z.string(),
  /** Its `err`, as the daemon gave it (LXD: `Failed to run: … forkstart …: exit status 1`). */
  err: z.string(),
  /** When it failed: the time of the operation event that reported the failure (ISO 8601). */
  at: z.string(),
});
export type StartFailure = z.infer<typeof startFailureSchema>;
export type Intent = z.infer<typeof intentSchema>;

const common = {
  /** Stable dedupe key: the same daemon event always gets the same id. */
  id: z.string(),
  /** The target (server) this event came from, as configured. */
  target: z.string(),
  /** Cluster member; "none" on a standalone server. */
  location: z.string(),
  project: z.string(),
  /** Event time as the daemon stamped it (ISO 8601). */
  timestamp: z.string(),
  /** True for events made up by a resync rather than received from the stream. */
  synthetic: z.boolean().default(false),
};

export const instanceStatusEventSchema = z.object({
  kind: z.literal('instance.status'),
  ...common,
  instance: z.string(),
  /** Status code before, when known. */
  from: z.number().int().optional(),
  /** Status code after (e.g. 102 Stopped, 103 Running, 112 Error). */
  to: z.number().int(),
  intent: intentSchema,
  /** The lifecycle action that announced it (instance-shutdown, …), absent for synthetic events. */
  action: z.string().optional(),
  requestor: z.record(z.string(), z.unknown()).optional(),
  /** With intent `failed-start`: the failed start this stop follows. */
  startFailure: startFailureSchema.optional(),
  /**
   * A resync's: the instance is down as it was last known, but the daemon's last start
   * (`last_used_at`, this value) is after what was last known of it: it ran and went down again
   * unseen (both events in a gap), a new stop of unknown cause.
   */
  startedUnseen: z.string().optional(),
  /**
   * A resync's: the daemon's `last_used_at` (its last start) as read with this status. Kept with
   * the status it sets, so that the next resync can tell a start it did not see, on the daemon's
   * clock, from an entry made of a read (whose time is Reflex's).
   */
  lastUsedAt: z.string().optional(),
});

export const operationStatusEventSchema = z.object({
  kind: z.literal('operation.status'),
  ...common,
  operationId: z.string(),
  to: z.number().int(),
  class: z.string(),
  description: z.string(),
  err: z.string(),
  /** Instance names the operation touches (from either revision's resource key). */
  instances: z.array(z.string()),
});

export const lifecycleEventSchema = z.object({
  kind: z.literal('lifecycle'),
  ...common,
  action: z.string(),
  source: z.string(),
  instance: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  requestor: z.record(z.string(), z.unknown()).optional(),
});

/**
 * A follow-up event a rule published with the `emit` action, so other rules can trigger on it
 * (`{ kind: 'rule.event', name: ['…'] }`). Its id is derived from the emitting rule, the name and
 * the incident, so a retried action publishes it once.
 */
export const ruleEventSchema = z.object({
  kind: z.literal('rule.event'),
  ...common,
  /** What happened, in the emitting rule's words (lowercase, digits, dots and dashes). */
  name: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/),
  /** The instance the emitting rule acted on. */
  instance: z.string(),
  /** Free-form data from the emitting rule. */
  payload: z.record(z.string(), z.unknown()).default({}),
  /** The rule that emitted it. */
  rule: z.string(),
  /** Correlation id of the incident it follows from (the id of the event that triggered `rule`). */
  causedBy: z.string(),
  /** The rules that emitted along the causal chain, oldest first; its length is the hop count. */
  chain: z.array(z.string()).min(1),
});

/**
 * An alert received from outside (an Alertmanager webhook, or a generic signed webhook): one alert
 * of the payload, firing or resolved. Not a state transition: it goes through the rules (and the
 * archive and audit) like any event, with the instance it names read fresh. Its id is a hash of
 * source, target, fingerprint, status and startsAt, so a redelivered webhook is one event.
 */
export const alertEventSchema = z.object({
  kind: z.literal('alert'),
  ...common,
  /** Which endpoint received it. */
  source: z.enum(['alertmanager', 'webhook']),
  /** The `alertname` label. */
  alertname: z.string(),
  status: z.enum(['firing', 'resolved']),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  /** When the alert started (ISO 8601, as the sender gave it). */
  startsAt: z.string(),
  /** When it ended (resolved), or will be considered ended (firing); absent when the sender gave none. */
  endsAt: z.string().optional(),
  /** The sender's identity of the alert (Alertmanager: a hash of its labels). */
  fingerprint: z.string(),
  /** The instance a label names (see docs/events.md, Inbound alerts); absent when none does. */
  instance: z.string().optional(),
  /** Link back to the source of the alert (Prometheus' expression browser), when given. */
  generatorURL: z.string().optional(),
});

/**
 * A health probe of an instance crossed its threshold (src/probes): `unhealthy` after
 * `failureThreshold` failed checks in a row, `healthy` again after `successThreshold` good ones.
 * Only transitions are events, never each check. Its id is derived from the probe, the instance's
 * identity and the transition's sequence number, so a transition published twice is one event.
 */
export const instanceHealthEventSchema = z.object({
  kind: z.literal('instance.health'),
  ...common,
  instance: z.string(),
  /** The probe's name (its `defineProbe` name, or `config` for one given by `user.reflex.probe.*` alone). */
  probe: z.string(),
  /** What the probe concludes now. */
  health: z.enum(['healthy', 'unhealthy']),
  /** What it concluded before (`unknown` before the first conclusion since the instance started). */
  previous: z.enum(['healthy', 'unhealthy', 'unknown']),
  /** exec, http or tcp. */
  check: z.enum(['exec', 'http', 'tcp']),
  /** The last check's output, its tail (exit code and stderr/stdout of an exec, status of an http call, the error). */
  output: z.string(),
  /** Checks in a row with the outcome that made this transition. */
  consecutive: z.number().int(),
  /** How long the last check took (ms). */
  durationMs: z.number(),
  /** When the first check of the streak that made the transition ran (ISO 8601). */
  since: z.string(),
  /** The instance's `volatile.uuid`, when known: the identity the transition belongs to. */
  uuid: z.string().optional(),
});

export const canonicalEventSchema = z.discriminatedUnion('kind', [
  instanceStatusEventSchema,
  operationStatusEventSchema,
  lifecycleEventSchema,
  ruleEventSchema,
  alertEventSchema,
  instanceHealthEventSchema,
]);
export type CanonicalEvent = z.infer<typeof canonicalEventSchema>;
export type InstanceStatusEvent = z.infer<typeof instanceStatusEventSchema>;
export type OperationStatusEvent = z.infer<typeof operationStatusEventSchema>;
export type LifecycleEvent = z.infer<typeof lifecycleEventSchema>;
export type RuleEvent = z.infer<typeof ruleEventSchema>;
export type AlertEvent = z.infer<typeof alertEventSchema>;
export type InstanceHealthEvent = z.infer<typeof instanceHealthEventSchema>;
export type EventKind = CanonicalEvent['kind'];
