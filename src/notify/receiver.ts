import { ReflexError } from '../errors/reflex-error.js';
import { alertmanagerRequest } from './alertmanager-receiver.js';
import { cloudEventData, cloudEventRequest } from './cloudevents-receiver.js';
import { discordPayload } from './discord-receiver.js';
import { EmailSender } from './email-receiver.js';
import { postMessage } from './http-delivery.js';
import { mattermostPayload } from './mattermost-receiver.js';
import { unknownTitlePlaceholders } from './message-text.js';
import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import { pagerDutyEventsUrl, pagerDutyRequests } from './pagerduty-receiver.js';
import {
  receiverConfigSchema,
  shownReceiverUrl,
  type EmailConfig,
  type ReceiverConfig,
  type ReceiverConfigInput,
  type ReceiverKind,
  type WebhookConfig,
} from './receiver-config.js';
import { Secret } from './secret.js';
import { slackPayload } from './slack-receiver.js';
import { teamsPayload } from './teams-receiver.js';
import { webhookPayload, webhookRequest } from './webhook-receiver.js';
import { webhookKey } from './webhook-signature.js';

/**
 * A configured destination: sends a notification the way its service documents. The endpoint and
 * every credential are {@link Secret}s, so printing or serialising a receiver shows `[redacted]`
 * in their place.
 */
export interface Receiver {
  readonly name: string;
  readonly kind: ReceiverKind;
  readonly config: ReceiverConfig;
  /** The endpoint (for email, `smtp://host:port`). */
  readonly url: Secret;
  /**
   * Sends one message. `createdAt` is when it was queued, the same on every retry, so a retry
   * sends the same bytes (CloudEvents `time`, the mail's Date). Resolves with the status the
   * service answered (HTTP status, SMTP reply code); throws DeliveryError.
   */
  send(n: Notification, createdAt: Date): Promise<number>;
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

/** The secret a receiver names, from the environment or a file; an error names the receiver. */
function readSecret(receiver: string, from: { env?: string; file?: string }, env: NodeJS.ProcessEnv): Secret {
  const neededBy = `notification receiver ${receiver}`;
  return from.env !== undefined ? Secret.fromEnv(from.env, env, neededBy) : Secret.fromFile(from.file!, neededBy);
}

/**
 * The Standard Webhooks keys of a signed webhook, one per named secret (several while rotating);
 * a secret that is not `whsec_<base64>` is CONFIG_INVALID naming the field and where it was read, never the value.
 */
function signingKeys(config: WebhookConfig, env: NodeJS.ProcessEnv): { secrets: Secret[]; keys: Buffer[] } {
  const field = config.secretEnv !== undefined ? 'secretEnv' : 'secretFile';
  const secrets = [
    ...names(config.secretEnv).map((e) => readSecret(config.name, { env: e }, env)),
    ...names(config.secretFile).map((f) => readSecret(config.name, { file: f }, env)),
  ];
  const keys = secrets.map((s) => {
    const parsed = webhookKey(s.reveal());
    if ('problem' in parsed)
      throw new ReflexError(
        'CONFIG_INVALID',
        `notification receiver ${config.name}: ${field} ${s.source.replace(/^\w+:/, '')} ${parsed.problem}; a Standard Webhooks secret is whsec_ and the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))`,
      );
    return parsed.key;
  });
  return { secrets, keys };
}

/** Literal headers plus those read from the environment or files (`headersFrom`, `bearerToken*`). */
function requestHeaders(config: ReceiverConfig, env: NodeJS.ProcessEnv): { headers: Record<string, string>; secrets: Secret[] } {
  if (!('headersFrom' in config)) return { headers: {}, secrets: [] };
  const secrets: Secret[] = [];
  const headers: Record<string, string> = { ...config.headers };
  for (const [name, from] of Object.entries(config.headersFrom)) {
    const s = readSecret(config.name, from as { env?: string; file?: string }, env);
    secrets.push(s);
    headers[name.toLowerCase()] = s.reveal();
  }
  if (config.bearerTokenEnv !== undefined || config.bearerTokenFile !== undefined) {
    const s = readSecret(config.name, { env: config.bearerTokenEnv, file: config.bearerTokenFile }, env);
    secrets.push(s);
    headers.authorization = `Bearer ${s.reveal()}`;
  }
  return { headers, secrets };
}

function emailAuth(config: EmailConfig, env: NodeJS.ProcessEnv): { user: Secret | string; password: Secret } | undefined {
  if (config.passwordEnv === undefined && config.passwordFile === undefined) return undefined;
  const user = config.userEnv !== undefined ? Secret.fromEnv(config.userEnv, env, `notification receiver ${config.name}`) : config.user;
  if (user === undefined) throw new ReflexError('CONFIG_INVALID', `notification receiver ${config.name}: a password needs a user (user or userEnv)`);
  return { user, password: readSecret(config.name, { env: config.passwordEnv, file: config.passwordFile }, env) };
}

function endpoint(config: ReceiverConfig, env: NodeJS.ProcessEnv): Secret {
  if (config.kind === 'email') return new Secret(`smtp://${config.host}:${config.port ?? (config.tls ? 465 : 587)}`, 'config');
  if (config.url !== undefined) return new Secret(config.url, 'config');
  if (config.urlEnv === undefined && config.urlFile === undefined && config.kind === 'pagerduty') return new Secret(pagerDutyEventsUrl, 'default');
  return readSecret(config.name, { env: config.urlEnv, file: config.urlFile }, env);
}

/** Validates a receiver's configuration and reads its secrets from `env` or files; throws CONFIG_INVALID. */
export function createReceiver(input: ReceiverConfigInput, env: NodeJS.ProcessEnv = process.env): Receiver {
  const config = parseConfig(input);
  const badPlaceholders = config.titleTemplate === undefined ? [] : unknownTitlePlaceholders(config.titleTemplate);
  if (badPlaceholders.length)
    throw new ReflexError(
      'CONFIG_INVALID',
      `notification receiver ${config.name}: titleTemplate has unknown placeholder(s) ${badPlaceholders.join(', ')}; known: {status} {firing} {resolved} {count} {kinds} {instances} {projects} {targets} {receiver} {group.KEY}`,
    );
  const url = endpoint(config, env);
  const signing = config.kind === 'webhook' ? signingKeys(config, env) : undefined;
  const routingKey =
    config.kind === 'pagerduty' ? readSecret(config.name, { env: config.routingKeyEnv, file: config.routingKeyFile }, env) : undefined;
  const auth = config.kind === 'email' ? emailAuth(config, env) : undefined;
  const extra = requestHeaders(config, env);
  const secrets = [
    url,
    ...(signing?.secrets ?? []),
    ...extra.secrets,
    ...(routingKey ? [routingKey] : []),
    ...(auth ? [auth.password, ...(typeof auth.user === 'string' ? [] : [auth.user])] : []),
  ];
  const scrub = (text: string) => secrets.reduce((t, s) => s.scrub(t), text);
  const json = (payload: unknown): OutgoingRequest[] => [{ headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) }];

  const render = (n: Notification, createdAt: Date, now: Date): OutgoingRequest[] => {
    const custom = config.template?.(n);
    switch (config.kind) {
      case 'slack':
        return json(custom ?? slackPayload(n, config));
      case 'mattermost':
        return json(custom ?? mattermostPayload(n, config));
      case 'discord':
        return json(custom ?? discordPayload(n, config));
      case 'teams':
        return json(custom ?? teamsPayload(n, config));
      case 'webhook':
        return [webhookRequest(extra.headers, signing!.keys, custom ?? webhookPayload(n), n, now)];
      case 'cloudevents':
        return [cloudEventRequest(config, extra.headers, custom ?? cloudEventData(n), n, createdAt)];
      case 'pagerduty':
        return pagerDutyRequests(config, routingKey!.reveal(), n);
      case 'alertmanager':
        return [alertmanagerRequest(config, url.reveal(), extra.headers, n, createdAt)];
      case 'email':
        throw new Error('email is not sent over HTTP');
    }
  };

  const receiver: Receiver = {
    name: config.name,
    kind: config.kind,
    config,
    url,
    send: async (n, createdAt) => {
      let status = 0;
      // Several requests (PagerDuty: one event per alert) are sent in order; a retry resends all of them, which each service de-duplicates.
      for (const req of render(n, createdAt, new Date())) status = await postMessage(receiver, req);
      return status;
    },
    scrub,
    toJSON: () => {
      const { template, ...rest } = config;
      const plainUrl = 'url' in rest ? rest.url : undefined;
      return { ...rest, ...(plainUrl ? { url: shownReceiverUrl(plainUrl) } : {}), template: template ? 'custom' : 'default' };
    },
  };
  if (config.kind === 'email') {
    const sender = new EmailSender(config, auth, scrub);
    return { ...receiver, send: (n, createdAt) => sender.send(n, createdAt) };
  }
  return receiver;
}
