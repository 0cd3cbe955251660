/**
 * The public entry for rule authors: everything a file in rules/ may import from 'reflex-lxd'.
 */
export { defineRule } from './rules/rule.js';
export type { RuleDefinition, Rule, Trigger, ActionSpec, RuleContext, ApprovalPolicy } from './rules/rule.js';
export type {
  CanonicalEvent,
  InstanceStatusEvent,
  OperationStatusEvent,
  LifecycleEvent,
  InstanceHealthEvent,
  Intent,
} from './events/canonical-event.js';
export type { Instance } from './client/instance.js';
export { StatusCode } from './client/status-code.js';
export { configFlag } from './rules/config-flag.js';
export { defineSchedule } from './schedules/schedule.js';
export type { ScheduleDefinition, Schedule, TaskDefinition } from './schedules/schedule.js';
export { defineProbe } from './probes/probe.js';
export type { ProbeDefinition, Probe } from './probes/probe.js';
export { defineNotifications } from './notify/notify-config.js';
export type { NotifyConfig } from './notify/notify-config.js';
export { verifyWebhookSignature } from './notify/webhook-signature.js';
export { defineAction } from './actions/define-action.js';
export type { ActionDefinition, DefinedAction } from './actions/define-action.js';
export type { ActionContext, ActionOutcome } from './actions/action.js';
export { ReflexError } from './errors/reflex-error.js';
export type { ErrorCode } from './errors/codes.js';
/** zod, as Reflex itself uses it: the schemas of `defineAction` params (`z.strictObject({...})`). */
export { z } from 'zod';
