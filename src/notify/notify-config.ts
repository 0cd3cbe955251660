import { ReflexError } from '../errors/reflex-error.js';
import type { ReceiverConfigInput } from './receiver-config.js';
import type { RouteConfig } from './router.js';

/**
 * Notification settings as a user writes them (rules/examples/receivers.ts): receivers, the
 * routing tree, and where audit trail links point.
 */
export interface NotifyConfig {
  receivers: ReceiverConfigInput[];
  route: RouteConfig;
  /**
   * Link to an incident's audit trail; `{correlationId}`, `{instance}`, `{project}` and `{target}`
   * are replaced (URL-encoded), e.g. `http://reflex-host:9464/dashboard?instance={instance}`.
   * Default: none; messages then quote only the correlation id for `reflex audit`.
   */
  auditUrl?: string;
}

/** Identity function that gives a TypeScript receivers file its types. */
export function defineNotifications(config: NotifyConfig): NotifyConfig {
  return config;
}

/**
 * Reads notification settings from the environment: `REFLEX_NOTIFY` holds the JSON of a
 * {@link NotifyConfig} (templates and filters need TypeScript). Secrets stay in their own
 * variables, named by `urlEnv` and `secretEnv`. Returns undefined when unset.
 */
export function notifyConfigFromEnv(env: NodeJS.ProcessEnv = process.env): NotifyConfig | undefined {
  const raw = env.REFLEX_NOTIFY;
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new ReflexError('CONFIG_INVALID', `REFLEX_NOTIFY is not JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || !Array.isArray((value as NotifyConfig).receivers) || typeof (value as NotifyConfig).route !== 'object') {
    throw new ReflexError('CONFIG_INVALID', 'REFLEX_NOTIFY must be {"receivers": [...], "route": {...}}');
  }
  return value as NotifyConfig;
}

/**
 * The audit link of an incident, or undefined without an `auditUrl` setting. `{correlationId}`,
 * `{instance}`, `{project}` and `{target}` are replaced, URL-encoded.
 */
export function auditLink(template: string | undefined, where: { correlationId: string; instance: string; project: string; target: string }): string | undefined {
  return template?.replace(/\{(correlationId|instance|project|target)\}/g, (_, key: keyof typeof where) => encodeURIComponent(where[key]));
}
