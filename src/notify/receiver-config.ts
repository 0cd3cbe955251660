import { z } from 'zod';
import { receiverSchemaWith } from '../config/notification-settings.js';
import type { Notification } from './notification.js';

/** Turns a notification into the JSON a receiver posts (for CloudEvents: the event's `data`). */
export type NotificationTemplate = (n: Notification) => unknown;

const template = z.custom<NotificationTemplate>((v) => typeof v === 'function', 'template must be a function (n) => payload');

/**
 * A receiver as TypeScript configuration gives it: the data fields of the config file's receivers
 * (src/config/notification-settings.ts) and a `template` that replaces the default payload.
 */
export const receiverConfigSchema = receiverSchemaWith({
  /** Replaces the default payload (see docs/notifications.md). */
  template: template.optional(),
});

export type ReceiverConfig = z.output<typeof receiverConfigSchema>;
export type ReceiverConfigInput = z.input<typeof receiverConfigSchema>;
export type ReceiverKind = ReceiverConfig['kind'];
export type SlackConfig = Extract<ReceiverConfig, { kind: 'slack' }>;
export type MattermostConfig = Extract<ReceiverConfig, { kind: 'mattermost' }>;
export type DiscordConfig = Extract<ReceiverConfig, { kind: 'discord' }>;
export type WebhookConfig = Extract<ReceiverConfig, { kind: 'webhook' }>;
export type CloudEventsConfig = Extract<ReceiverConfig, { kind: 'cloudevents' }>;
export type EmailConfig = Extract<ReceiverConfig, { kind: 'email' }>;
export type PagerDutyConfig = Extract<ReceiverConfig, { kind: 'pagerduty' }>;
export type AlertmanagerConfig = Extract<ReceiverConfig, { kind: 'alertmanager' }>;
