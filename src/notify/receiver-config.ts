import { z } from 'zod';
import type { Notification } from './notification.js';

/** Turns a notification into the JSON a receiver posts (for CloudEvents: the event's `data`). */
export type NotificationTemplate = (n: Notification) => unknown;

const template = z.custom<NotificationTemplate>((v) => typeof v === 'function', 'template must be a function (n) => payload');

/** Fields every receiver kind shares. */
const common = {
  /** Unique name; routes and `fallback` refer to it. */
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'receiver names use letters, digits, _ . -'),
  /** The endpoint, when it holds no secret. Exactly one of `url` and `urlEnv`. */
  url: z.url().optional(),
  /** Name of the environment variable holding the endpoint (chat webhook URLs carry their token). */
  urlEnv: z.string().optional(),
  /** Per-request timeout in ms. Default 5000. */
  timeoutMs: z.number().int().positive().default(5000),
  /** Attempts before giving up (and handing the message to `fallback`). Default 5. */
  maxAttempts: z.number().int().min(1).default(5),
  /** First retry delay in ms; doubles per attempt, with ±25 % jitter. Default 1000. */
  backoffMs: z.number().int().min(0).default(1000),
  /** Messages allowed per window; messages over it wait for the next window. Default: no limit. */
  rateLimit: z.strictObject({ count: z.number().int().positive(), windowMs: z.number().int().positive() }).optional(),
  /** Receiver that gets the message when this one has failed `maxAttempts` times. */
  fallback: z.string().optional(),
  /** Replaces the default payload (see docs/notifications.md). */
  template: template.optional(),
};

export const slackConfigSchema = z.strictObject({ kind: z.literal('slack'), ...common, channel: z.string().optional(), username: z.string().optional(), iconEmoji: z.string().optional() });
export const mattermostConfigSchema = z.strictObject({ kind: z.literal('mattermost'), ...common, channel: z.string().optional(), username: z.string().optional(), iconUrl: z.string().optional() });
export const discordConfigSchema = z.strictObject({ kind: z.literal('discord'), ...common, username: z.string().optional(), avatarUrl: z.string().optional() });
export const teamsConfigSchema = z.strictObject({ kind: z.literal('teams'), ...common });
export const webhookConfigSchema = z.strictObject({
  kind: z.literal('webhook'),
  ...common,
  /** Environment variable holding the HMAC-SHA256 key the body is signed with. */
  secretEnv: z.string(),
  /** Extra request headers (not secret). */
  headers: z.record(z.string(), z.string()).default({}),
});
export const cloudEventsConfigSchema = z.strictObject({
  kind: z.literal('cloudevents'),
  ...common,
  /** CloudEvents `source` attribute. Default `/reflex`. */
  source: z.string().default('/reflex'),
  /** Prefix of the `type` attribute; `.firing` or `.resolved` is appended. Default `dev.reflex.alert`. */
  typePrefix: z.string().default('dev.reflex.alert'),
});

export const receiverConfigSchema = z
  .discriminatedUnion('kind', [slackConfigSchema, mattermostConfigSchema, discordConfigSchema, teamsConfigSchema, webhookConfigSchema, cloudEventsConfigSchema])
  .refine((c) => (c.url === undefined) !== (c.urlEnv === undefined), { message: 'give exactly one of url and urlEnv' });

export type ReceiverConfig = z.output<typeof receiverConfigSchema>;
export type ReceiverConfigInput = z.input<typeof receiverConfigSchema>;
export type ReceiverKind = ReceiverConfig['kind'];
export type SlackConfig = z.output<typeof slackConfigSchema>;
export type MattermostConfig = z.output<typeof mattermostConfigSchema>;
export type DiscordConfig = z.output<typeof discordConfigSchema>;
export type WebhookConfig = z.output<typeof webhookConfigSchema>;
export type CloudEventsConfig = z.output<typeof cloudEventsConfigSchema>;
