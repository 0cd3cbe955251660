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
};

const kinds = {
  slack: z.strictObject({ kind: z.literal('slack'), ...common, channel: z.string().optional(), username: z.string().optional(), iconEmoji: z.string().optional() }),
  mattermost: z.strictObject({ kind: z.literal('mattermost'), ...common, channel: z.string().optional(), username: z.string().optional(), iconUrl: z.string().optional() }),
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
    /** Extra request headers (not secret). */
    headers: z.record(z.string(), z.string()).default({}),
  }),
  cloudevents: z.strictObject({
    kind: z.literal('cloudevents'),
    ...common,
    /** CloudEvents `source` attribute. Default `/reflex`. */
    source: z.string().default('/reflex'),
    /** Prefix of the `type` attribute; `.firing` or `.resolved` is appended. Default `dev.reflex.alert`. */
    typePrefix: z.string().default('dev.reflex.alert'),
  }),
};

function exactlyOne(c: Record<string, unknown>, fields: string[], ctx: z.RefinementCtx): void {
  const given = fields.filter((f) => c[f] !== undefined);
  if (given.length !== 1) ctx.addIssue({ code: 'custom', path: [given[1] ?? fields[0]!], message: `give exactly one of ${fields.join(', ')}` });
}

/** The receiver schema with `extra` fields on every kind (src/notify/ adds `template`). */
export function receiverSchemaWith<const X extends z.core.$ZodLooseShape>(extra: X) {
  return z
    .discriminatedUnion('kind', [kinds.slack.extend(extra), kinds.mattermost.extend(extra), kinds.discord.extend(extra), kinds.teams.extend(extra), kinds.webhook.extend(extra), kinds.cloudevents.extend(extra)])
    .superRefine((c, ctx) => {
      const fields = c as Record<string, unknown>;
      exactlyOne(fields, ['url', 'urlEnv', 'urlFile'], ctx);
      if (fields.kind === 'webhook') exactlyOne(fields, ['secretEnv', 'secretFile'], ctx);
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

const routeSettingsSchema: z.ZodType<RouteSettings> = z.lazy(() => z.strictObject({ ...routeFields, routes: z.array(routeSettingsSchema).optional() }));

/** The `notifications` section of the configuration (config file or `REFLEX_NOTIFY`). */
export const notificationSettingsSchema = z.strictObject({
  receivers: z.array(receiverSchemaWith({})).min(1, 'at least one receiver'),
  route: routeSettingsSchema,
  /**
   * Link to an incident's audit trail; `{correlationId}`, `{instance}`, `{project}` and `{target}`
   * are replaced (URL-encoded). Default: none.
   */
  auditUrl: z.string().optional(),
});
