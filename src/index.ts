/**
 * The public entry for rule authors: everything a file in rules/ may import from 'reflex-lxd'.
 */
export { defineRule } from './rules/rule.js';
export type { RuleDefinition, Rule, Trigger, ActionSpec, RuleContext } from './rules/rule.js';
export type { CanonicalEvent, InstanceStatusEvent, OperationStatusEvent, LifecycleEvent, Intent } from './events/canonical-event.js';
export type { Instance } from './client/instance.js';
export { StatusCode } from './client/status-code.js';
export { configFlag } from './rules/config-flag.js';
export { defineSchedule } from './schedules/schedule.js';
export type { ScheduleDefinition, Schedule, TaskDefinition } from './schedules/schedule.js';
export { defineNotifications } from './notify/notify-config.js';
export type { NotifyConfig } from './notify/notify-config.js';
export { verifyWebhookSignature } from './notify/webhook-signature.js';
