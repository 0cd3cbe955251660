import { notificationSettingsSchema, type InhibitRuleSettings } from '../config/notification-settings.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { ReceiverConfigInput } from './receiver-config.js';
import type { RouteConfig } from './router.js';
import { fillPlaceholders } from './placeholders.js';

/**
 * Notification settings as a TypeScript file in the rules folder gives them
 * (rules/examples/receivers.ts): receivers, the routing tree, and where audit trail links point.
 * The config file's `notifications` section has the same fields, except templates and filters.
 */
export interface NotifyConfig {
  receivers: ReceiverConfigInput[];
  route: RouteConfig;
  /**
   * Inhibition rules (Alertmanager's inhibit_rules). Default: a `storm` alert inhibits the
   * `instance.crashed` and `instance.error` alerts of its target and member; `[]`: none.
   */
  inhibitRules?: InhibitRuleSettings[];
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
 * Reads notification settings from the environment: `REFLEX_NOTIFY` holds the JSON of the config
 * file's `notifications` section (templates and filters need TypeScript). Secrets stay in their own
 * variables or files, named by `urlEnv`/`urlFile` and `secretEnv`/`secretFile`. Undefined when unset.
 */
function notifyConfigFromEnv(env: NodeJS.ProcessEnv): NotifyConfig | undefined {
  const raw = env.REFLEX_NOTIFY;
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    // JSON.parse's message quotes the text around the error, which may hold a receiver's URL.
    throw new ReflexError('CONFIG_INVALID', `REFLEX_NOTIFY is not JSON (${/position \d+/.exec((err as Error).message)?.[0] ?? 'syntax error'})`);
  }
  const parsed = notificationSettingsSchema.safeParse(value);
  if (!parsed.success)
    throw new ReflexError(
      'CONFIG_INVALID',
      `REFLEX_NOTIFY: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(settings)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/**
 * The notification settings of a worker, from the one place that defines them: the configuration's
 * `notifications` section (the config file), `REFLEX_NOTIFY`, or a `defineNotifications` file in the
 * rules folder. Receivers are one list: two of these places is CONFIG_INVALID naming both, rather
 * than one silently hiding the other. Undefined when none defines any.
 */
export function chooseNotifyConfig(sources: {
  config?: NotifyConfig;
  rulesFolder?: NotifyConfig;
  env?: NodeJS.ProcessEnv;
}): { settings: NotifyConfig; from: string } | undefined {
  const found = [
    { from: 'the config file (notifications)', settings: sources.config },
    { from: 'the environment (REFLEX_NOTIFY)', settings: notifyConfigFromEnv(sources.env ?? process.env) },
    { from: 'the rules folder (a defineNotifications file)', settings: sources.rulesFolder },
  ].filter((s): s is { from: string; settings: NotifyConfig } => s.settings !== undefined);
  if (found.length > 1)
    throw new ReflexError(
      'CONFIG_INVALID',
      `notification receivers are defined in ${found.map((f) => f.from).join(' and ')}; keep them in one place`,
    );
  return found[0];
}

/**
 * The audit link of an incident, or undefined without an `auditUrl` setting. `{correlationId}`,
 * `{instance}`, `{project}` and `{target}` are replaced, URL-encoded.
 */
export function auditLink(
  template: string | undefined,
  where: { correlationId: string; instance: string; project: string; target: string },
): string | undefined {
  if (template === undefined) return undefined;
  return fillPlaceholders(template, ({ name, path }) =>
    path === undefined && Object.hasOwn(where, name) ? encodeURIComponent(where[name as keyof typeof where]) : undefined,
  );
}
