import { z } from 'zod';
import type { CanonicalEvent, EventKind, Intent } from '../events/canonical-event.js';
import { intentSchema } from '../events/canonical-event.js';
import type { Instance } from '../client/instance.js';
import type { FilterExpr } from '../filter/ast.js';
import { parseFilter } from '../filter/parser.js';
import { ReflexError } from '../errors/reflex-error.js';
import { stackPlaces } from '../errors/stack-place.js';
import { durationMs } from '../config/duration.js';

/**
 * Crash-loop policy of a rule, after Kubernetes' CrashLoopBackOff: the first restart is
 * immediate, later ones wait `initialBackoffMs` doubling up to `maxBackoffMs`; a stable run of
 * `resetAfterMs` forgets the history; more than `maxRestarts` within `windowMs` quarantines the
 * instance (no more restarts, one alert) for `quarantineMs`.
 */
export interface CrashLoopPolicy {
  /** Default 5. */
  maxRestarts?: number;
  /** Default 600 000 ms (10 min). */
  windowMs?: number;
  /** Default 10 000 ms. */
  initialBackoffMs?: number;
  /** Default 300 000 ms. */
  maxBackoffMs?: number;
  /** Default 600 000 ms. */
  resetAfterMs?: number;
  /** Default 3 600 000 ms; the operator can lift it earlier with `reflex quarantine release`. */
  quarantineMs?: number;
}

/**
 * What a rule listens to. Status codes are numbers (112, 102), never texts; an omitted field
 * matches anything.
 */
export interface Trigger {
  kind: EventKind;
  /** Status codes the event must move to (instance.status, operation.status). */
  to?: number[];
  /** Intents accepted (instance.status). */
  intent?: Intent[];
  /** Lifecycle actions accepted (lifecycle, instance.status), e.g. "instance-shutdown". */
  action?: string[];
  /** Names of follow-up events accepted (rule.event), as given to the `emit` action. */
  name?: string[];
  /** Alert names accepted (alert: the `alertname` label), e.g. `['HighMemory']`. */
  alertname?: string[];
  /** Alert statuses accepted (alert). Default both: a resolved alert is an event too. */
  status?: ('firing' | 'resolved')[];
  /** Labels the alert must carry, each with exactly this value (alert); for patterns use `when`. */
  labels?: Record<string, string>;
  /** Health the probe concluded (instance.health): `['unhealthy']` to heal, `['healthy']` to note a recovery. */
  health?: ('healthy' | 'unhealthy')[];
  /** Probe names accepted (instance.health), as given to `defineProbe` (`config` for a probe set by instance config alone). */
  probe?: string[];
}

/** One action a rule takes, looked up by name in the actions registry. */
export interface ActionSpec {
  action: string;
  params?: Record<string, unknown>;
  /**
   * What to do instead of giving up when this action fails for good (an `exec` whose exit code is
   * not expected or that timed out, retries spent, an error no retry can help): these actions are
   * queued for the same incident and run like any other (lock, re-check, retries, audit); no
   * dead-letter entry, no critical alert. One level deep: they may not have `onFailure` themselves.
   * Default: none (the action gives up).
   */
  onFailure?: Omit<ActionSpec, 'onFailure'>[];
}

/** Which instances a rule is for. Every field given must match; an omitted one matches anything. */
export interface RuleScope {
  /**
   * The seed's filter language, evaluated on the instance as just read, with LXD's semantics
   * (case-insensitive anchored regex on string fields): e.g. `config.user.reflex.autorestart eq true`.
   */
  filter?: string;
  projects?: string[];
  /** Targets as configured (e.g. `unix:///var/lib/lxd/unix.socket`). */
  targets?: string[];
  /** Cluster members (`location`); "none" on a standalone server. */
  locations?: string[];
}

/** What a rule's predicate sees. The instance is read fresh from the server before deciding. */
export interface RuleContext {
  event: CanonicalEvent;
  instance: Instance | undefined;
}

/**
 * A rule: what it listens to, which instances it is for, and what it does. This is the whole
 * contract a rule author writes; see rules/restart-on-crash.ts.
 */
export interface RuleDefinition {
  /** Unique name; used in audit records and idempotency keys. */
  name: string;
  description?: string;
  /** One trigger or several (any may match). */
  on: Trigger | Trigger[];
  /** Which instances the rule is for, declaratively. Checked before `when`. */
  scope?: RuleScope;
  /**
   * Which instances the rule is for: return false to skip (the reason is audited). Receives the
   * instance as read just now.
   */
  when?: (ctx: RuleContext) => boolean | Promise<boolean>;
  /** Why `when` said no, for the audit log. Default "condition not met". */
  whenNot?: string;
  actions: ActionSpec[];
  /** After acting on an instance, do not act on it again for this long. Default: no cooldown. */
  cooldownMs?: number;
  /**
   * Crash-loop budget for rules that restart instances (defaults in CrashLoopPolicy); `false`
   * turns it off. Default: off.
   */
  crashLoop?: CrashLoopPolicy | false;
  /** Higher runs first when actions queue up. Default 0. */
  priority?: number;
  /** Default true. */
  enabled?: boolean;
  /** Record decisions and planned calls but send no mutating request. Default false. */
  dryRun?: boolean;
  /**
   * The rule's actions wait for an operator's approval before they are queued (docs/approvals.md):
   * `role` is the least console role that may decide (default `operator`), `timeout` how long the
   * request stands (ms, or a duration such as `15m`; default 15 minutes): past it nothing is done
   * and an alert says so. Approved, the actions are re-checked at the moment of acting like any other.
   */
  approval?: ApprovalPolicy;
}

/** Who may approve a rule's actions, and for how long the request stands. */
export interface ApprovalPolicy {
  role?: 'operator' | 'admin';
  timeout?: number | string;
}

/** The default time an approval request stands: 15 minutes. */
export const defaultApprovalTimeoutMs = 15 * 60_000;

const approvalSchema = z.strictObject({
  role: z.enum(['operator', 'admin']).default('operator'),
  timeout: durationMs(
    z
      .number()
      .int()
      .min(1_000)
      .max(7 * 86_400_000),
  ).default(defaultApprovalTimeoutMs),
});

/** A rule's approval policy as it applies: the role and the timeout in milliseconds; undefined when its actions need none. */
export function approvalOf(rule: Pick<RuleDefinition, 'approval'>): { role: 'operator' | 'admin'; timeoutMs: number } | undefined {
  if (!rule.approval) return undefined;
  const p = approvalSchema.parse(rule.approval);
  return { role: p.role, timeoutMs: p.timeout };
}

/** A validated rule, as the engine uses it. */
export interface Rule extends RuleDefinition {
  triggers: Trigger[];
  /** `scope.filter`, parsed once. */
  scopeFilter?: FilterExpr;
  /** Where `defineRule` was called (the rule file as written), for logs about the rule. */
  definedAt?: { file: string; line: number };
}

const triggerSchema = z.strictObject({
  kind: z.enum(['instance.status', 'operation.status', 'lifecycle', 'rule.event', 'alert', 'instance.health']),
  to: z.array(z.number().int().min(100).max(599)).optional(),
  intent: z.array(intentSchema).optional(),
  action: z.array(z.string()).optional(),
  name: z.array(z.string()).optional(),
  alertname: z.array(z.string()).optional(),
  status: z.array(z.enum(['firing', 'resolved'])).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  health: z.array(z.enum(['healthy', 'unhealthy'])).optional(),
  probe: z.array(z.string()).optional(),
});

const ruleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  description: z.string().optional(),
  on: z.union([triggerSchema, z.array(triggerSchema).min(1)]),
  scope: z
    .strictObject({
      filter: z.string().optional(),
      projects: z.array(z.string()).optional(),
      targets: z.array(z.string()).optional(),
      locations: z.array(z.string()).optional(),
    })
    .optional(),
  cooldownMs: z.number().int().min(0).optional(),
  crashLoop: z
    .union([
      z.literal(false),
      z.strictObject({
        maxRestarts: z.number().int().min(1).optional(),
        windowMs: z.number().int().min(1).optional(),
        initialBackoffMs: z.number().int().min(0).optional(),
        maxBackoffMs: z.number().int().min(0).optional(),
        resetAfterMs: z.number().int().min(0).optional(),
        quarantineMs: z.number().int().min(1).optional(),
      }),
    ])
    .optional(),
  priority: z.number().int().min(0).max(1000).optional(),
  when: z.function().optional(),
  whenNot: z.string().optional(),
  actions: z
    .array(
      z.strictObject({
        action: z.string(),
        params: z.record(z.string(), z.unknown()).optional(),
        onFailure: z
          .array(z.strictObject({ action: z.string(), params: z.record(z.string(), z.unknown()).optional() }))
          .min(1)
          .optional(),
      }),
    )
    .min(1),
  enabled: z.boolean().optional(),
  dryRun: z.boolean().optional(),
  approval: approvalSchema.optional(),
});

/** One field a rule definition got wrong: its path in the definition (`crashLoop.maxRestarts`) and what is wrong. */
export interface RuleIssue {
  path: (string | number)[];
  message: string;
}

/**
 * What {@link defineRule} throws: a RULE_INVALID error carrying the rule's name and each field at
 * fault, so the loader can point at the field's line in the file. Recognised by its `ruleIssues`,
 * not by class: the rule file's copy of Reflex may be another module instance.
 */
export interface RuleDefinitionError extends ReflexError {
  rule?: string;
  ruleIssues: RuleIssue[];
}

/** Whether an error is a {@link RuleDefinitionError} (by shape). */
export function isRuleDefinitionError(err: unknown): err is RuleDefinitionError {
  return err instanceof Error && Array.isArray((err as Partial<RuleDefinitionError>).ruleIssues);
}

/** A zod message without its "Invalid input: " preamble (the field path says where already). */
const plain = (message: string) => message.replace(/^Invalid input: /, '');

/**
 * A zod issue as the fields at fault. A union (`crashLoop: false | {...}`, `on: trigger | trigger[]`)
 * fails as a whole with "Invalid input"; the branch that got deepest into the value is the one
 * the author meant, so its issues are reported, under the union's path. When no branch got past
 * the value itself, the alternatives are named.
 */
function issuesOf(issue: z.core.$ZodIssue, prefix: (string | number)[] = []): RuleIssue[] {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  // Each unknown key is a field of its own, so its line can be found.
  if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => ({ path: [...path, k], message: 'unknown field' }));
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [{ path, message: plain(issue.message) }];
  const depth = (branch: z.core.$ZodIssue[]) => Math.max(...branch.map((i) => i.path.length + (i.code === 'invalid_union' ? 1 : 0)));
  const deepest = Math.max(...issue.errors.map(depth));
  if (deepest === 0) return [{ path, message: [...new Set(issue.errors.flat().map((i) => plain(i.message)))].join(', or ') }];
  const branch = issue.errors.find((b) => depth(b) === deepest)!;
  return branch.flatMap((i) => issuesOf(i, path));
}

function ruleInvalid(name: unknown, issues: RuleIssue[]): RuleDefinitionError {
  const rule = typeof name === 'string' ? name : undefined;
  const text = issues.map((i) => `${i.path.join('.') || '(rule)'}: ${i.message}`).join('; ');
  return Object.assign(new ReflexError('RULE_INVALID', `invalid rule${rule ? ` "${rule}"` : ''}: ${text}`), {
    ruleIssues: issues,
    ...(rule ? { rule } : {}),
  });
}

/** Validates a rule definition; throws a {@link RuleDefinitionError} naming each field at fault. */
export function defineRule(def: RuleDefinition): Rule {
  // The stack from the caller of defineRule on, whatever this module's own frames map to.
  const trace: { stack?: string } = {};
  Error.captureStackTrace(trace, defineRule);
  const at = stackPlaces(trace.stack)[0];
  const parsed = ruleSchema.safeParse(def);
  if (!parsed.success)
    throw ruleInvalid(
      def?.name,
      parsed.error.issues.flatMap((i) => issuesOf(i)),
    );
  let scopeFilter: FilterExpr | undefined;
  if (def.scope?.filter) {
    try {
      scopeFilter = parseFilter(def.scope.filter);
    } catch (err) {
      throw ruleInvalid(def.name, [{ path: ['scope', 'filter'], message: (err as Error).message }]);
    }
  }
  return {
    ...def,
    triggers: Array.isArray(def.on) ? def.on : [def.on],
    ...(scopeFilter ? { scopeFilter } : {}),
    ...(at ? { definedAt: { file: at.file, line: at.line } } : {}),
  };
}
