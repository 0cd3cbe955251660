import { z } from 'zod';
import { receiverSchemaWith } from '../config/notification-settings.js';
import { redactUrl } from '../log/redaction.js';
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

/**
 * A receiver's plain `url` as Reflex shows it (`--print-config`, a receiver's JSON): the origin
 * only. Chat webhooks (Slack, Discord, Teams, Mattermost) carry their token in the path, other
 * endpoints may in the path, the query or the userinfo; none of those is needed to recognise one.
 */
export function shownReceiverUrl(url: string): string {
  return redactUrl(url, { hidePath: true });
}

/** Kinds whose endpoint URL is itself the credential: whoever reads it can post to the channel. */
const urlIsSecret: ReadonlySet<string> = new Set(['slack', 'discord', 'teams', 'mattermost']);

/**
 * One warning per receiver whose URL is its own secret (a chat webhook) but is written in the
 * configuration as `url`, where every reader of the file (and of a backup of it) sees it.
 */
export function plainSecretUrlWarnings(receivers: readonly { kind: string; name: string; url?: string }[]): string[] {
  return receivers
    .filter((r) => urlIsSecret.has(r.kind) && r.url !== undefined)
    .map(
      (r) =>
        `notification receiver ${r.name}: a ${r.kind} webhook URL is a secret (its path is the token), yet it is written as url in the configuration; put it in an environment variable or a file and name that with urlEnv or urlFile`,
    );
}
