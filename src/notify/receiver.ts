import { ReflexError } from '../errors/reflex-error.js';
import { redactUrl } from '../log/redaction.js';
import { cloudEventData, cloudEventRequest } from './cloudevents-receiver.js';
import { discordPayload } from './discord-receiver.js';
import { mattermostPayload } from './mattermost-receiver.js';
import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import { receiverConfigSchema, type ReceiverConfig, type ReceiverConfigInput, type ReceiverKind, type WebhookConfig } from './receiver-config.js';
import { Secret } from './secret.js';
import { slackPayload } from './slack-receiver.js';
import { teamsPayload } from './teams-receiver.js';
import { webhookPayload, webhookRequest } from './webhook-receiver.js';
import { webhookKey } from './webhook-signature.js';

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

function names(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

/** The secret a receiver names, from the environment or a file. */
function readSecret(from: { env?: string; file?: string }, env: NodeJS.ProcessEnv): Secret {
  return from.env !== undefined ? Secret.fromEnv(from.env, env) : Secret.fromFile(from.file!);
}

/**
 * The Standard Webhooks keys of a signed webhook, one per named secret (several while rotating);
 * a secret that is not `whsec_<base64>` is CONFIG_INVALID naming the field and where it was read, never the value.
 */
function signingKeys(config: WebhookConfig, env: NodeJS.ProcessEnv): { secrets: Secret[]; keys: Buffer[] } {
  const field = config.secretEnv !== undefined ? 'secretEnv' : 'secretFile';
  const secrets = [...names(config.secretEnv).map((e) => readSecret({ env: e }, env)), ...names(config.secretFile).map((f) => readSecret({ file: f }, env))];
  const keys = secrets.map((s) => {
    const parsed = webhookKey(s.reveal());
    if ('problem' in parsed) throw new ReflexError('CONFIG_INVALID', `notification receiver ${config.name}: ${field} ${s.source.replace(/^\w+:/, '')} ${parsed.problem}; a Standard Webhooks secret is whsec_ and the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))`);
    return parsed.key;
  });
  return { secrets, keys };
}

/** Validates a receiver's configuration and reads its secrets from `env` or files; throws CONFIG_INVALID. */
export function createReceiver(input: ReceiverConfigInput, env: NodeJS.ProcessEnv = process.env): Receiver {
  const config = parseConfig(input);
  const url = config.url !== undefined ? new Secret(config.url, 'config') : readSecret({ env: config.urlEnv, file: config.urlFile }, env);
  const signing = config.kind === 'webhook' ? signingKeys(config, env) : undefined;
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
        return webhookRequest(config, signing!.keys, custom ?? webhookPayload(n), n, now);
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
    scrub: (text) => [url, ...(signing?.secrets ?? [])].reduce((t, s) => s.scrub(t), text),
    toJSON: () => {
      const { template, url: plainUrl, ...rest } = config;
      // A plain url may still carry a token in its query or userinfo; print the origin only.
      return { ...rest, ...(plainUrl ? { url: redactUrl(plainUrl, { hidePath: true }) } : {}), template: template ? 'custom' : 'default' };
    },
  };
}
