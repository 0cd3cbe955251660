import { ReflexError } from '../errors/reflex-error.js';
import { redactUrl } from '../log/redaction.js';
import { cloudEventData, cloudEventRequest } from './cloudevents-receiver.js';
import { discordPayload } from './discord-receiver.js';
import { mattermostPayload } from './mattermost-receiver.js';
import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import { receiverConfigSchema, type ReceiverConfig, type ReceiverConfigInput, type ReceiverKind } from './receiver-config.js';
import { Secret } from './secret.js';
import { slackPayload } from './slack-receiver.js';
import { teamsPayload } from './teams-receiver.js';
import { webhookPayload, webhookRequest } from './webhook-receiver.js';

/**
 * A configured destination: renders a notification into the request its service documents. The
 * endpoint and signing key are {@link Secret}s, so printing or serialising a receiver shows
 * `[redacted]` in their place.
 */
export interface Receiver {
  readonly name: string;
  readonly kind: ReceiverKind;
  readonly config: ReceiverConfig;
  readonly url: Secret;
  /** Renders the request for this attempt (`now` stamps signatures and CloudEvents `time`). */
  render(n: Notification, now?: Date): OutgoingRequest;
  /** Removes every secret of this receiver from a text (error messages). */
  scrub(text: string): string;
  toJSON(): Record<string, unknown>;
}

function parseConfig(input: ReceiverConfigInput): ReceiverConfig {
  const parsed = receiverConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const where = (input as { name?: unknown }).name ?? '(unnamed)';
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(receiver)'}: ${i.message}`).join('; ');
  throw new ReflexError('CONFIG_INVALID', `notification receiver ${String(where)}: ${issues}`);
}

/** Validates a receiver's configuration and reads its secrets from `env`; throws CONFIG_INVALID. */
export function createReceiver(input: ReceiverConfigInput, env: NodeJS.ProcessEnv = process.env): Receiver {
  const config = parseConfig(input);
  const url = config.urlEnv ? Secret.fromEnv(config.urlEnv, env) : new Secret(config.url!, 'config');
  const signingKey = config.kind === 'webhook' ? Secret.fromEnv(config.secretEnv, env) : undefined;
  const json = (payload: unknown): OutgoingRequest => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });

  const render = (n: Notification, now = new Date()): OutgoingRequest => {
    const custom = config.template?.(n);
    switch (config.kind) {
      case 'slack':
        return json(custom ?? slackPayload(n, config));
      case 'mattermost':
        return json(custom ?? mattermostPayload(n, config));
      case 'discord':
        return json(custom ?? discordPayload(n, config));
      case 'teams':
        return json(custom ?? teamsPayload(n));
      case 'webhook':
        return webhookRequest(config, signingKey!, custom ?? webhookPayload(n), n, now);
      case 'cloudevents':
        return cloudEventRequest(config, custom ?? cloudEventData(n), n, now);
    }
  };

  return {
    name: config.name,
    kind: config.kind,
    config,
    url,
    render,
    scrub: (text) => [url, signingKey].reduce((t, s) => (s ? s.scrub(t) : t), text),
    toJSON: () => {
      const { template, url: plainUrl, ...rest } = config;
      // A plain url may still carry a token in its query or userinfo; print the origin only.
      return { ...rest, ...(plainUrl ? { url: redactUrl(plainUrl, { hidePath: true }) } : {}), template: template ? 'custom' : 'default' };
    },
  };
}
