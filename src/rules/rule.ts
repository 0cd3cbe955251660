import { z } from 'zod';
import type { CanonicalEvent, EventKind, Intent } from '../events/canonical-event.js';
import { intentSchema } from '../events/canonical-event.js';
import type { Instance } from '../client/instance.js';

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
}

/** One action a rule takes, looked up by name in the actions registry. */
export interface ActionSpec {
  action: string;
  params?: Record<string, unknown>;
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
  /**
   * Which instances the rule is for: return false to skip (the reason is audited). Receives the
   * instance as read just now.
   */
  when?: (ctx: RuleContext) => boolean | Promise<boolean>;
  /** Why `when` said no, for the audit log. Default "condition not met". */
  whenNot?: string;
  actions: ActionSpec[];
  /** Default true. */
  enabled?: boolean;
  /** Record decisions and planned calls but send no mutating request. Default false. */
  dryRun?: boolean;
}

/** A validated rule, as the engine uses it. */
export interface Rule extends RuleDefinition {
  triggers: Trigger[];
}

const triggerSchema = z.strictObject({
  kind: z.enum(['instance.status', 'operation.status', 'lifecycle']),
  to: z.array(z.number().int().min(100).max(599)).optional(),
  intent: z.array(intentSchema).optional(),
  action: z.array(z.string()).optional(),
});

const ruleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  description: z.string().optional(),
  on: z.union([triggerSchema, z.array(triggerSchema).min(1)]),
  when: z.function().optional(),
  whenNot: z.string().optional(),
  actions: z.array(z.strictObject({ action: z.string(), params: z.record(z.string(), z.unknown()).optional() })).min(1),
  enabled: z.boolean().optional(),
  dryRun: z.boolean().optional(),
});

/** Validates a rule definition; throws a readable error naming the field at fault. */
export function defineRule(def: RuleDefinition): Rule {
  const parsed = ruleSchema.safeParse(def);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(rule)'}: ${i.message}`).join('; ');
    throw new Error(`invalid rule${def && typeof def.name === 'string' ? ` "${def.name}"` : ''}: ${issues}`);
  }
  return { ...def, triggers: Array.isArray(def.on) ? def.on : [def.on] };
}
