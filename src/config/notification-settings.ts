import { z } from 'zod';

/**
 * The data of notification settings: receivers, the routing tree and audit links, as the config
 * file (`notifications:`), `REFLEX_NOTIFY` and a TypeScript `defineNotifications` file give them.
 * It lives here so the config schema can hold it; src/notify/ adds the fields only TypeScript can
 * give (a receiver's `template`, a route's `filter`).
 */

/** One environment variable or file name, or several: a signing key being rotated. */
const oneOrMore = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** Fields every receiver kind shares. */
const common = {
  /** Unique name; routes and `fallback` refer to it. */
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'receiver names use letters, digits, _ . -'),
  /** The endpoint, when it holds no secret. Exactly one of `url`, `urlEnv` and `urlFile`. */
  url: z.url().optional(),
  /** Name of the environment variable holding the endpoint (chat webhook URLs carry their token). */
  urlEnv: z.string().min(1).optional(),
  /** Path of a file holding the endpoint (a systemd credential, a mounted Kubernetes secret). */
  urlFile: z.string().min(1).optional(),
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
  /** Whether messages list resolved alerts, and a group whose alerts all cleared gets a resolved message (Alertmanager's send_resolved). Default true. */
  sendResolved: z.boolean().default(true),
  /**
   * The message's title (chat heading, email subject) instead of the default `[FIRING:2] kind:
   * instances`, with placeholders: {status} {firing} {resolved} {count} {kinds} {instances}
   * {projects} {targets} {receiver} and {group.KEY}. Plain text, no code. Default: the built-in title.
   */
  titleTemplate: z.string().min(1).optional(),
};

/** The common fields without an endpoint (email has a mail server instead). */
const { url: _url, urlEnv: _urlEnv, urlFile: _urlFile, ...commonNoEndpoint } = common;

/** An environment variable or a file holding one secret value. */
const secretSource = z.union([z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })]);

/** Request headers of the HTTP receivers that can carry auth: literal ones hold no secret. */
const requestHeaders = {
  /** Extra request headers whose values are not secret (no Authorization, Cookie or token here: see `headersFrom`). */
  headers: z.record(z.string(), z.string()).default({}),
  /** Headers whose values are secret, each read from `{ env: NAME }` or `{ file: PATH }`. */
  headersFrom: z.record(z.string(), secretSource).default({}),
  /** Environment variable holding a token sent as `Authorization: Bearer <token>`. */
  bearerTokenEnv: z.string().min(1).optional(),
  /** File holding that token, instead of `bearerTokenEnv`. */
  bearerTokenFile: z.string().min(1).optional(),
};

const kinds = {
  slack: z.strictObject({
    kind: z.literal('slack'),
    ...common,
    channel: z.string().optional(),
    username: z.string().optional(),
    iconEmoji: z.string().optional(),
  }),
  mattermost: z.strictObject({
    kind: z.literal('mattermost'),
    ...common,
    channel: z.string().optional(),
    username: z.string().optional(),
    iconUrl: z.string().optional(),
  }),
  discord: z.strictObject({ kind: z.literal('discord'), ...common, username: z.string().optional(), avatarUrl: z.string().optional() }),
  teams: z.strictObject({ kind: z.literal('teams'), ...common }),
  webhook: z.strictObject({
    kind: z.literal('webhook'),
    ...common,
    /**
     * Environment variable(s) holding the Standard Webhooks signing secret (`whsec_<base64>`).
     * Several while a key is rotated: the request carries a signature by each. Exactly one of
     * `secretEnv` and `secretFile`.
     */
    secretEnv: oneOrMore.optional(),
    /** File(s) holding the signing secret, instead of `secretEnv`. */
    secretFile: oneOrMore.optional(),
    ...requestHeaders,
  }),
  cloudevents: z.strictObject({
    kind: z.literal('cloudevents'),
    ...common,
    /** CloudEvents `source` attribute. Default `/reflex`. */
    source: z.string().default('/reflex'),
    /** Prefix of the `type` attribute; `.firing` or `.resolved` is appended. Default `dev.reflex.alert`. */
    typePrefix: z.string().default('dev.reflex.alert'),
    ...requestHeaders,
  }),
  email: z.strictObject({
    kind: z.literal('email'),
    ...commonNoEndpoint,
    /** Timeout of each SMTP step (connect, greeting, each command) in ms. Default 10000. */
    timeoutMs: z.number().int().positive().default(10_000),
    /** The mail server's host name. */
    host: z.string().min(1),
    /** Its port. Default 587 (submission with STARTTLS), or 465 when `tls` is true. */
    port: z.number().int().min(1).max(65_535).optional(),
    /** Implicit TLS from the first byte (port 465). Default false. */
    tls: z.boolean().default(false),
    /** Refuse to send unless the server upgrades the connection with STARTTLS. Default true when `tls` is false. */
    requireStartTls: z.boolean().optional(),
    /** Check the server's certificate. Default true; false only for a test server. */
    verifyCertificate: z.boolean().default(true),
    /** SMTP auth user, when it is not secret (else `userEnv`). */
    user: z.string().min(1).optional(),
    /** Environment variable holding the SMTP auth user. */
    userEnv: z.string().min(1).optional(),
    /** Environment variable holding the SMTP auth password. */
    passwordEnv: z.string().min(1).optional(),
    /** File holding the SMTP auth password, instead of `passwordEnv`. */
    passwordFile: z.string().min(1).optional(),
    /** The From address, e.g. `Reflex <reflex@example.org>`. */
    from: z.string().min(3),
    /** Recipients. */
    to: z.union([z.string().min(3), z.array(z.string().min(3)).min(1)]),
    /** Copy recipients. */
    cc: z.union([z.string().min(3), z.array(z.string().min(3)).min(1)]).optional(),
  }),
  pagerduty: z.strictObject({
    kind: z.literal('pagerduty'),
    ...common,
    /** Environment variable holding the Events API v2 routing (integration) key. Exactly one of `routingKeyEnv` and `routingKeyFile`. */
    routingKeyEnv: z.string().min(1).optional(),
    /** File holding the routing key, instead of `routingKeyEnv`. */
    routingKeyFile: z.string().min(1).optional(),
    /** `client` shown on the PagerDuty alert. Default `Reflex`. */
    client: z.string().default('Reflex'),
  }),
  alertmanager: z.strictObject({
    kind: z.literal('alertmanager'),
    ...common,
    /**
     * How long a firing alert stays firing in Alertmanager without news from Reflex (its `endsAt`);
     * keep the repeat interval of routes to this receiver below it. Default 24 h.
     */
    firingTtlMs: z.number().int().positive().default(86_400_000),
    ...requestHeaders,
  }),
};

/** Header names that carry credentials: their values come from `headersFrom` or `bearerToken*`, never the file. */
const secretHeaderName = /^(authorization|proxy-authorization|cookie)$|token|secret|api-?key|password|signature/i;

function exactlyOne(c: Record<string, unknown>, fields: string[], ctx: z.RefinementCtx): void {
  const given = fields.filter((f) => c[f] !== undefined);
  if (given.length !== 1) ctx.addIssue({ code: 'custom', path: [given[1] ?? fields[0]!], message: `give exactly one of ${fields.join(', ')}` });
}

function atMostOne(c: Record<string, unknown>, fields: string[], ctx: z.RefinementCtx): void {
  const given = fields.filter((f) => c[f] !== undefined);
  if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `give at most one of ${fields.join(', ')}` });
}

/** The receiver schema with `extra` fields on every kind (src/notify/ adds `template`). */
export function receiverSchemaWith<const X extends z.core.$ZodLooseShape>(extra: X) {
  return z
    .discriminatedUnion('kind', [
      kinds.slack.extend(extra),
      kinds.mattermost.extend(extra),
      kinds.discord.extend(extra),
      kinds.teams.extend(extra),
      kinds.webhook.extend(extra),
      kinds.cloudevents.extend(extra),
      kinds.email.extend(extra),
      kinds.pagerduty.extend(extra),
      kinds.alertmanager.extend(extra),
    ])
    .superRefine((c, ctx) => {
      const fields = c as Record<string, unknown>;
      // PagerDuty has a default endpoint (the US one); email has a mail server instead.
      if (fields.kind === 'pagerduty') atMostOne(fields, ['url', 'urlEnv', 'urlFile'], ctx);
      else if (fields.kind !== 'email') exactlyOne(fields, ['url', 'urlEnv', 'urlFile'], ctx);
      if (fields.kind === 'webhook') exactlyOne(fields, ['secretEnv', 'secretFile'], ctx);
      if (fields.kind === 'pagerduty') exactlyOne(fields, ['routingKeyEnv', 'routingKeyFile'], ctx);
      if (fields.kind === 'email') {
        atMostOne(fields, ['user', 'userEnv'], ctx);
        atMostOne(fields, ['passwordEnv', 'passwordFile'], ctx);
      }
      atMostOne(fields, ['bearerTokenEnv', 'bearerTokenFile'], ctx);
      for (const name of Object.keys((fields.headers as Record<string, string> | undefined) ?? {})) {
        if (secretHeaderName.test(name))
          ctx.addIssue({
            code: 'custom',
            path: ['headers', name],
            message:
              'a header that carries a credential takes its value from headersFrom (env or file) or bearerTokenEnv/bearerTokenFile, never from the file itself',
          });
      }
    });
}

const ms = z.number().int().min(0);

/** Fields of a route node, but `routes` (src/notify/ adds `filter`). */
export const routeFields = {
  receiver: z.string().optional(),
  match: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
  matchRe: z.record(z.string(), z.string()).optional(),
  groupBy: z.array(z.string()).optional(),
  groupWaitMs: ms.optional(),
  groupIntervalMs: z.number().int().positive().optional(),
  repeatIntervalMs: z.number().int().positive().optional(),
  continue: z.boolean().optional(),
};

/**
 * A node of the routing tree, as in Alertmanager: an alert enters at the root, descends into the
 * first child whose matchers all hold (and on into further children whenever a matching child has
 * `continue: true`), and is sent by the deepest matching routes. Unset fields inherit from the parent.
 */
export interface RouteSettings {
  /** Receiver name. Required on the root. */
  receiver?: string;
  /** Field or label → value (or any of several values) the alert must have; e.g. `{ severity: ['warning', 'critical'] }`. */
  match?: Record<string, string | string[]>;
  /** Field or label → regular expression (anchored) its value must match; e.g. `{ instance: 'web-.*' }`. */
  matchRe?: Record<string, string>;
  /** Keys whose values split alerts into groups (one message per group). Root default `['kind', 'project']`. */
  groupBy?: string[];
  /** How long a new group waits for more alerts before its first message. Root default 30 s. */
  groupWaitMs?: number;
  /** How long after a group's message its changes (new or resolved alerts) are sent. Root default 5 min. */
  groupIntervalMs?: number;
  /** How long before an unchanged, still-firing group is sent again. Root default 4 h. */
  repeatIntervalMs?: number;
  /** Keep looking at the following siblings after this route matched. Default false. */
  continue?: boolean;
  routes?: RouteSettings[];
}

const routeSettingsSchema: z.ZodType<RouteSettings> = z.lazy(() =>
  z.strictObject({ ...routeFields, routes: z.array(routeSettingsSchema).optional() }),
);

const matchers = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/**
 * An inhibition rule, as Alertmanager's `inhibit_rules`: while an alert matching the source
 * matchers fires, alerts matching the target matchers that have the same values of the `equal`
 * keys (a key absent from both counts as equal) are left out of messages. Keys are those of routes.
 */
export const inhibitRuleSchema = z.strictObject({
  /** Field or label → value(s) the inhibiting (source) alert must have, e.g. `{ kind: 'storm' }`. */
  sourceMatch: matchers.optional(),
  /** Field or label → anchored regular expression the source alert's value must match. */
  sourceMatchRe: z.record(z.string(), z.string()).optional(),
  /** Field or label → value(s) the inhibited (target) alert must have. */
  targetMatch: matchers.optional(),
  /** Field or label → anchored regular expression the target alert's value must match. */
  targetMatchRe: z.record(z.string(), z.string()).optional(),
  /** Keys whose values source and target must share, e.g. `[target, member]`. Default none. */
  equal: z.array(z.string()).default([]),
});
export type InhibitRuleSettings = z.input<typeof inhibitRuleSchema>;

/** The `notifications` section of the configuration (config file or `REFLEX_NOTIFY`). */
export const notificationSettingsSchema = z.strictObject({
  /**
   * Inhibition rules. Default: a `storm` alert inhibits the `instance.crashed` and `instance.error`
   * alerts of its target and member; `[]` turns inhibition off.
   */
  inhibitRules: z.array(inhibitRuleSchema).optional(),
  receivers: z.array(receiverSchemaWith({})).min(1, 'at least one receiver'),
  route: routeSettingsSchema,
  /**
   * Link to an incident's audit trail; `{correlationId}`, `{instance}`, `{project}` and `{target}`
   * are replaced (URL-encoded). Default: none.
   */
  auditUrl: z.string().optional(),
});
