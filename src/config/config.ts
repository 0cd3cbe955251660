import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';
import { isSensitiveName, redactText, redactUrl } from '../log/redaction.js';
import { redisKind } from '../redis/connect.js';
import { durationMs } from './duration.js';
import { defaultHistoryDir } from './history-dir.js';
import { notificationSettingsSchema } from './notification-settings.js';

/** A URL `redisFromUrl` reads (a single Redis, a Cluster or a Sentinel set-up), ports in range. */
function isRedisUrl(url: string): boolean {
  try {
    return redisKind(url) !== 'single' || URL.canParse(url);
  } catch {
    return false;
  }
}

export const roleSchema = z.enum(['all', 'subscriber', 'worker', 'scheduler']);
export type Role = z.infer<typeof roleSchema>;

const fingerprintSchema = z.string().regex(/^[0-9a-fA-F:]{64,95}$/, 'a SHA-256 fingerprint in hex');

/** One server or cluster of a deployment that watches several (`targets` in the config file). */
export const targetEntrySchema = z
  .strictObject({
    /** What logs and /readyz call this target. Letters, digits and `_.-`. */
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
    /**
     * `unix:///path/to/unix.socket` or `https://host:8443` (one member of a cluster is enough; several,
     * comma-separated, fail over between them).
     */
    target: z.string().min(1).optional(),
    /**
     * A cluster's member addresses (`https://…`), tried in this order, instead of `target`: calls and
     * the event stream fail over between them. The first is the target's identity (Redis keys).
     */
    addresses: z.array(z.string().startsWith('https://', 'an https://host:port address')).min(1).optional(),
    /** A remote of the lxc/incus client configuration, instead of `target`. */
    remote: z.string().min(1).optional(),
    clientCert: z.string().optional(),
    clientKey: z.string().optional(),
    serverCert: z.string().optional(),
    serverFingerprint: fingerprintSchema.optional(),
    /** Watch only this project (a certificate restricted to it); default: every project. */
    project: z.string().min(1).optional(),
  })
  .superRefine((t, ctx) => {
    const given = [t.target && 'target', t.addresses && 'addresses', t.remote && 'remote'].filter(Boolean);
    if (given.length === 0) ctx.addIssue({ code: 'custom', path: ['target'], message: 'give target (unix:///… or https://…), addresses or remote' });
    if (given.length > 1)
      ctx.addIssue({ code: 'custom', path: [given[1] as string], message: `give one of target, addresses or remote, not ${given.join(' and ')}` });
  });
export type TargetEntry = z.infer<typeof targetEntrySchema>;

/** The single-target fields, which `targets` replaces. */
export const singleTargetFields = ['target', 'remote', 'clientCert', 'clientKey', 'serverCert', 'serverFingerprint'] as const;

/** A secret named, never written: an environment variable or a file holding it. */
const secretRef = { env: z.string().min(1).optional(), file: z.string().min(1).optional() };

/**
 * Inbound alerts (docs/events.md, Inbound alerts): `POST /hooks/alertmanager` and `POST /hooks/webhook`
 * on the HTTP server. An endpoint is enabled only with its secret.
 */
export const inboundSchema = z
  .strictObject({
    /** Alertmanager's token, sent as `Authorization: Bearer <token>` (http_config.authorization) or as the basic-auth password: `tokenEnv` or `tokenFile`. */
    alertmanager: z.strictObject({ tokenEnv: secretRef.env, tokenFile: secretRef.file }).optional(),
    /** The generic webhook's Standard Webhooks secret(s) (`whsec_<base64>`), by `secretEnv` or `secretFile`; several while rotating. */
    webhook: z
      .strictObject({
        secretEnv: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
        secretFile: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
      })
      .optional(),
    /** Labels tried in order for the instance an alert names. Default lxd_instance, instance, name. */
    instanceLabels: z.array(z.string().min(1)).min(1).optional(),
    /** Label naming the project. Default project (absent: default). */
    projectLabel: z.string().min(1).optional(),
    /** Label naming the target (a configured target's name). Default lxd_target (absent: the first target). */
    targetLabel: z.string().min(1).optional(),
    /** Largest body accepted, in bytes (413 above). Default 1 048 576. */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .optional(),
    /** How far a signed webhook's timestamp may be from the clock, in seconds (replays). Default 300. */
    toleranceSec: z.number().int().min(1).max(3600).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.alertmanager && (c.alertmanager.tokenEnv === undefined) === (c.alertmanager.tokenFile === undefined))
      ctx.addIssue({ code: 'custom', path: ['alertmanager'], message: 'give exactly one of tokenEnv and tokenFile' });
    if (c.webhook && (c.webhook.secretEnv === undefined) === (c.webhook.secretFile === undefined))
      ctx.addIssue({ code: 'custom', path: ['webhook'], message: 'give exactly one of secretEnv and secretFile' });
  });
export type InboundConfig = z.infer<typeof inboundSchema>;

/** Where audit records live on after Redis (`history` in the config). */
export const historySchema = z.strictObject({
  /**
   * `files` (gzip NDJSON segments in `dir`, nothing to install, bounded by `maxBytes` and
   * `maxAgeMs`), `postgres` (a table in the database at `postgresUrlEnv`), or `none`: the audit
   * trail lives only in Redis, bounded by its retention. Default `files`.
   */
  store: z.enum(['files', 'postgres', 'none']).default('files'),
  /**
   * Folder of the `files` store (one sub-folder per prefix); relative to the config file's folder
   * when given there, else to the working directory.
   * Default `$STATE_DIRECTORY/history` under systemd (/var/lib/reflex/history), else
   * `$XDG_STATE_HOME/reflex/history`, else /var/lib/reflex/history when /var/lib/reflex exists (a
   * packaged install), else ~/.local/state/reflex/history.
   */
  dir: z
    .string()
    .min(1)
    .default(() => defaultHistoryDir()),
  /** Environment variable holding the PostgreSQL URL (`postgres://user:password@host/db`) of the `postgres` store; the URL is a secret, named, never written. Default `REFLEX_HISTORY_POSTGRES_URL`. */
  postgresUrlEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
    .default('REFLEX_HISTORY_POSTGRES_URL'),
  /** A `files` segment is closed at this many compressed bytes. Default 16 MiB. */
  segmentMaxBytes: z
    .number()
    .int()
    .min(4096)
    .default(16 * 1024 * 1024),
  /**
   * Compressed bytes the `files` store keeps at most: when a segment is closed, the oldest closed
   * segments are deleted until the store fits (the newest is always kept). 75 to 130 bytes a
   * record (shipped 500 or 10 at a time): the default holds 8 to 14 million. Default 1 GiB; 0: no size limit.
   */
  maxBytes: z
    .number()
    .int()
    .min(0)
    .default(1024 * 1024 * 1024),
  /** Age after which a closed `files` segment whose newest record is older is deleted (when a segment is closed). Default 365 days; 0: no age limit. */
  maxAgeMs: durationMs(z.number().int().min(0)).default(365 * 24 * 3600_000),
  /** How often the worker ships new records (and retries a failing store). Default 5000 ms. */
  shipIntervalMs: durationMs(z.number().int().min(100).max(3_600_000)).default(5_000),
  /**
   * Whether a failing store makes the worker not ready (/readyz 503, check `history`). Default
   * false: it stays ready, the check marked `degraded`, since Redis keeps the records meanwhile;
   * the alert `history.store-failing` and `reflex_history_store_up` say it either way.
   */
  required: z.boolean().default(false),
});

/** The effective configuration of `reflex run`. Each field documents its default. */
export const configSchema = z
  .strictObject({
    /**
     * Several servers or clusters, each with its own subscriber, lease and state (config file only).
     * Default: the one target of the single-target fields below, which cannot be given with it.
     */
    targets: z.array(targetEntrySchema).min(1, 'at least one target').optional(),
    /** `unix:///path/to/unix.socket` or `https://host:8443`; default: the first local LXD/Incus socket. */
    target: z.string().optional(),
    /** A remote of the user's lxc/incus client configuration (config.yml), used instead of `target`. */
    remote: z.string().optional(),
    /** Client certificate (PEM file) for an HTTPS target. */
    clientCert: z.string().optional(),
    /** Client key (PEM file) for an HTTPS target. */
    clientKey: z.string().optional(),
    /** Server certificate (PEM file) to pin for an HTTPS target. */
    serverCert: z.string().optional(),
    /** SHA-256 fingerprint (hex) of the server certificate to pin, instead of `serverCert`. */
    serverFingerprint: fingerprintSchema.optional(),
    /** Redis URL: redis://host:port, redis-cluster://host:port[,host:port…] or redis-sentinel://host:port[,host:port…]/MASTER_NAME (rediss… for TLS). Default redis://127.0.0.1:6379. */
    redisUrl: z
      .string()
      .refine(isRedisUrl, 'Invalid URL: expected redis://host:port, redis-cluster://host:port[,…] or redis-sentinel://host:port[,…]/MASTER_NAME')
      .default('redis://127.0.0.1:6379'),
    /**
     * How long `reflex run` waits for Redis at start-up before it exits with REDIS_UNAVAILABLE (a
     * replica started while Redis restarts, or during a host's boot, carries on once it answers).
     * Default 15 000 ms; 0 fails at once, as the other commands do.
     */
    redisStartupWaitMs: durationMs(z.number().int().min(0).max(600_000)).default(15_000),
    /** Folder of rule files; relative to the config file's folder when given there. Default ./rules, or /etc/reflex/rules when there is no ./rules. */
    rulesDir: z.string().default('./rules'),
    /**
     * Start even when a target does not answer at start-up, and wait for it (the subscriber keeps
     * trying; /readyz says not ready). Default false: an unreachable target fails `reflex run` at once.
     */
    waitForTarget: z.boolean().default(false),
    /** Which parts this process runs. Default all. */
    role: roleSchema.default('all'),
    /** Prefix of every Redis key; lets several deployments share a Redis. Default "reflex". */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .default('reflex'),
    /** Periodic full resync (catches Error 112, which no event announces). Default 30 000 ms; 0 disables. */
    resyncIntervalMs: durationMs(z.number().int().min(0)).default(30_000),
    /**
     * Lifetime of the subscriber lease: when the replica reading the event stream dies, another
     * takes over within about this long. Default 3000 ms.
     */
    leaseTtlMs: durationMs(z.number().int().min(300).max(60_000)).default(3_000),
    /** How long a resync lets the event stream catch up before reporting a difference. Default 1500 ms. */
    resyncGraceMs: durationMs(z.number().int().min(0).max(60_000)).default(1_500),
    /**
     * How long an event stream that was open may stay lost before /readyz says not ready (a daemon
     * restart reconnects within it). Default 30 000 ms; a stream never open since the start is not ready at once.
     */
    streamLossGraceMs: durationMs(z.number().int().min(0).max(3_600_000)).default(30_000),
    /**
     * Largest frame the events WebSocket accepts (`ws` maxPayload). A larger frame closes the socket
     * (1009): it is lost, kept as rejected, audited and alerted, and the stream reconnects and
     * resyncs. Default 4 MiB (4 194 304).
     */
    maxFrameBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(100 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    /**
     * Largest event kept whole: a larger frame has its largest fields replaced by
     * `{"truncated": true, "bytes": N}` before it is queued, audited or archived, and a rejected input
     * is kept cut to this size. Default 64 KiB (65 536).
     */
    maxEventBytes: z
      .number()
      .int()
      .min(4 * 1024)
      .max(16 * 1024 * 1024)
      .default(64 * 1024),
    /**
     * How far an event's time may be ahead of Reflex's clock: a frame dated further ahead is
     * processed at its receipt time, audited and alerted, and a tracked status dated further ahead
     * no longer hides newer news. Default 5 minutes.
     */
    clockToleranceMs: durationMs(z.number().int().min(1_000)).default(5 * 60_000),
    /**
     * Audit records the Redis audit stream keeps at most (trimmed on append, whole stream nodes: a
     * few more may stay). About 760 bytes a record: the default holds about 150 MB. Default 200 000; 0: no count limit.
     */
    auditMaxRecords: z.number().int().min(0).default(200_000),
    /** Age after which audit records leave the Redis audit stream (exact, on append). Default 7 days; 0: no age limit. */
    auditMaxAgeMs: durationMs(z.number().int().min(0)).default(7 * 24 * 3600_000),
    /** Entries the event archive (`<prefix>:archive`) keeps at most (about 1.6 KB each). Default 200 000. */
    archiveMaxLength: z.number().int().min(1).default(200_000),
    /** Age after which archived events are trimmed. Default 7 days. */
    archiveMaxAgeMs: durationMs(z.number().int().min(1_000)).default(7 * 24 * 3600_000),
    /**
     * Where audit records live on after Redis trims them (docs/operations.md, Audit history): a
     * worker ships them, in order and with their chain fields, before retention may drop them, and
     * `reflex audit` and the console read across the store and Redis.
     */
    history: historySchema.prefault({}),
    /**
     * Bytes of Redis memory the event archive may use: measured every `retentionCheckMs` (`MEMORY
     * USAGE`, sampled) and trimmed by count, oldest first, to 90 % of it when over. Default 128 MiB.
     */
    archiveMaxBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(128 * 1024 * 1024),
    /** Entries the rejected-input stream (`<prefix>:rejected`) keeps at most. Default 10 000. */
    rejectedMaxLength: z.number().int().min(1).default(10_000),
    /** Age after which rejected inputs are trimmed. Default 7 days. */
    rejectedMaxAgeMs: durationMs(z.number().int().min(1_000)).default(7 * 24 * 3600_000),
    /** Bytes of Redis memory the rejected-input stream may use (measured and trimmed as `archiveMaxBytes`). Default 64 MiB. */
    rejectedMaxBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(64 * 1024 * 1024),
    /** How often the streams' byte budgets are checked and Redis memory is sampled (metrics, `redis.memory-high`). Default 30 000 ms. */
    retentionCheckMs: durationMs(z.number().int().min(100).max(3_600_000)).default(30_000),
    /**
     * Finished jobs the events, actions and notification-delivery queues keep at most, for
     * the dashboard and to refuse a job re-added with the same id. Default 10 000.
     */
    jobsKeepCompleted: z.number().int().min(0).default(10_000),
    /**
     * How long those queues keep a finished job. Also the window of the dedupe keys that pair
     * with it (archive seen-keys, audit once-keys): never shorter than the events' retry span
     * (about 10 minutes). Default 1 hour.
     */
    jobsKeepCompletedMs: durationMs(z.number().int().min(1_000)).default(3600_000),
    /** Failed jobs those queues keep at most (the actions queue's are the dead-letter list, `reflex dlq`). Default 10 000. */
    jobsKeepFailed: z.number().int().min(0).default(10_000),
    /** How long those queues keep a failed job (to inspect and retry). Default 7 days. */
    jobsKeepFailedMs: durationMs(z.number().int().min(1_000)).default(7 * 24 * 3600_000),
    /**
     * Share of Redis `maxmemory` in use from which `redis.memory-high` fires (warning; critical from
     * 0.95, or this when higher), resolved when it drops below again. Default 0.85.
     */
    redisMemoryAlertRatio: z.number().gt(0).max(1).default(0.85),
    /** Attempts per action job, first included. Default 5. */
    actionAttempts: z.number().int().min(1).max(50).default(5),
    /**
     * Type-check the rule files (strict TypeScript, as `reflex rules check`) at start and at each
     * reload: a type error refuses the start (exit 3) or the reload. Default true; false (`reflex run
     * --no-typecheck`) for operators who check rules in CI.
     */
    typecheckRules: z.boolean().default(true),
    /** How long a rule's `when` may take before the decision is recorded as "condition timed out". Default 5000 ms. */
    ruleTimeoutMs: durationMs(z.number().int().min(10).max(300_000)).default(5_000),
    /** Concurrent action jobs per process: the bound on actions in flight (a mass failure is remediated this many at a time per replica). Default 32. */
    actionConcurrency: z.number().int().min(1).max(256).default(32),
    /** Storm control: this many distinct instances on one member whose remediation by one rule failed (the action gave up, or the instance failed again) within `stormWindowMs` hold that rule's actions there, with one grouped alert. Crashes alone never trip it. Default 10; 0 turns it off. */
    stormThreshold: z.number().int().min(0).default(10),
    /** Storm control's sliding window; a storm ends one window after it last had `stormThreshold` failing remediations. Default 60 000 ms. */
    stormWindowMs: durationMs(z.number().int().min(1_000)).default(60_000),
    /** How long restarting rules stand back after an unrequested stop of an instance with `boot.autorestart=true`, while the daemon retries (Incus: 10 restarts a minute). Default 75 000 ms. */
    autorestartStandBackMs: durationMs(z.number().int().min(0)).default(75_000),
    /** pino level. Default info. */
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Address the HTTP server (/metrics, /healthz, /readyz, /dashboard) binds. Default 127.0.0.1. */
    httpHost: z.string().min(1).default('127.0.0.1'),
    /** Port of the HTTP server. Default 9464; 0 disables it. */
    httpPort: z.number().int().min(0).max(65_535).default(9464),
    /** Shared bearer token of /dashboard (header or ?token=); none: only the users of `dashboardUsersFile` read, or with neither the dashboard is disabled. It only reads: bull-board is read-only without `dashboardWriteToken` or an admin. */
    dashboardToken: z.string().min(16, 'at least 16 characters').optional(),
    /**
     * Second token that lets bull-board change the queues (add, retry, clean, pause, obliterate jobs),
     * accepted only as `Authorization: Bearer` on a same-origin request, never as a cookie or ?token=.
     * None (the default): the dashboard is read-only. Must differ from `dashboardToken`.
     */
    dashboardWriteToken: z.string().min(16, 'at least 16 characters').optional(),
    /**
     * A users file: one console user a line, `NAME ROLE scrypt:N:r:p:SALT:HASH` (role `viewer`,
     * `operator` or `admin`; the hash of the user's own secret, see docs/console-access.md for the
     * one-liner that makes it). A user's secret (as Authorization: Bearer, `?token=` or the login
     * page's password) reads the dashboard; an operator's also acts in the console, an admin's also
     * on the queues page, audited under the user's name; a viewer's change is refused. Followed:
     * a change applies without a restart (a removed user is signed out). Enables the dashboard
     * without `dashboardToken`. None (the default): the shared `dashboardWriteToken` acts, under a name typed in.
     */
    dashboardUsersFile: z.string().min(1).optional(),
    /**
     * With `dashboardUsersFile`, whether the shared `dashboardWriteToken` still acts too (under a name
     * typed in, so nobody can tell who). Default false: only users act, each under their own name.
     */
    dashboardSharedWritesWithUsers: z.boolean().default(false),
    /** How long a console session lasts from sign-in (the login page, a user's `?token=`, the identity provider). Default 12 h. */
    dashboardSessionTtlMs: durationMs(
      z
        .number()
        .int()
        .min(60_000)
        .max(30 * 24 * 3_600_000),
    ).default(12 * 3_600_000),
    /**
     * Sign-in at an identity provider by OpenID Connect (authorization code with PKCE;
     * docs/console-access.md): the login page offers "Sign in with `name`", and the role claim's
     * values map to roles (`roles.admin`, `roles.operator`, `roles.viewer`: lists of values; the highest
     * matching role wins, none: refused). The client secret is named, never written:
     * `clientSecretEnv` or `clientSecretFile` (none: a public client). Enables the dashboard. Default: none.
     */
    dashboardOidc: z
      .strictObject({
        issuer: z.url(),
        clientId: z.string().min(1),
        clientSecretEnv: z.string().min(1).optional(),
        clientSecretFile: z.string().min(1).optional(),
        redirectUrl: z.url().optional(),
        name: z.string().min(1).max(60).default('single sign-on'),
        scopes: z.string().min(1).default('openid profile email'),
        nameClaim: z.string().min(1).default('preferred_username'),
        roleClaim: z.string().min(1).default('groups'),
        roles: z
          .strictObject({
            admin: z.array(z.string().min(1)).default([]),
            operator: z.array(z.string().min(1)).default([]),
            viewer: z.array(z.string().min(1)).default([]),
          })
          .prefault({}),
        allowHttp: z.boolean().default(false),
      })
      .optional(),
    /**
     * Rate limit of sign-ins (docs/console-access.md): `perSource` failed sign-ins or wrong tokens
     * from one address within `windowMs` lock that address out for `lockMs`; `perUser` failed
     * sign-ins naming one user lock that user out (from anywhere). Defaults 20, 5, 15 min, 15 min.
     */
    dashboardLockout: z
      .strictObject({
        perSource: z.number().int().min(1).default(20),
        perUser: z.number().int().min(1).default(5),
        windowMs: durationMs(z.number().int().min(1_000)).default(15 * 60_000),
        lockMs: durationMs(z.number().int().min(1_000)).default(15 * 60_000),
      })
      .prefault({}),
    /**
     * Host names the HTTP server answers to besides IP addresses, `localhost` and `httpHost`
     * (`*.example.org` matches its subdomains); any other Host header gets 421, which stops DNS
     * rebinding. Default none.
     */
    httpAllowedHosts: z.array(z.string().regex(/^(\*\.)?[A-Za-z0-9_.-]+$/, 'a host name, or *.domain')).default([]),
    /**
     * The console's address as people reach it, e.g. `https://reflex.example.org/dashboard`: the
     * base of the signed links in approval alerts (docs/approvals.md). Default
     * `http://<httpHost>:<httpPort>/dashboard`.
     */
    consoleUrl: z.url().optional(),
    /**
     * Notification receivers and routes (docs/notifications.md), instead of `REFLEX_NOTIFY` or a
     * defineNotifications file in the rules folder (only one of the three). Secrets are named, never
     * written: `urlEnv`/`urlFile`, `secretEnv`/`secretFile`. Default: no notifications.
     */
    notifications: notificationSettingsSchema.optional(),
    /**
     * Inbound alerts: Alertmanager (`POST /hooks/alertmanager`) and a generic signed webhook
     * (`POST /hooks/webhook`) become `alert` events for the rules (docs/events.md). Secrets are named,
     * never written: `alertmanager.tokenEnv`/`tokenFile`, `webhook.secretEnv`/`secretFile`. Default: both endpoints off.
     */
    inbound: inboundSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.dashboardWriteToken !== undefined && c.dashboardToken === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['dashboardWriteToken'],
        message: 'needs dashboardToken too (the write token only adds writes to a dashboard that is enabled)',
      });
    if (c.dashboardWriteToken !== undefined && c.dashboardWriteToken === c.dashboardToken)
      ctx.addIssue({ code: 'custom', path: ['dashboardWriteToken'], message: 'must differ from dashboardToken' });
    if (!c.targets) return;
    for (const f of singleTargetFields) {
      if (c[f] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [f],
          message: `not allowed with a targets list (set by the config file, the environment or a flag): move it into a targets entry, or drop targets`,
        });
    }
    c.targets.forEach((t, i) => {
      const first = c.targets!.findIndex((o) => o.name === t.name);
      if (first < i) ctx.addIssue({ code: 'custom', path: ['targets', i, 'name'], message: `"${t.name}" already names targets.${first}` });
    });
  });
export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

/** Fields that hold a path to a key file, not a key: shown, though their name sounds secret. */
const keyPathFields = new Set(['clientKey']);

/** What an error says was given: never a secret field's value, URLs without credentials, no whole objects. */
function describeGiven(path: PropertyKey[], value: unknown): string {
  if (value === undefined) return 'nothing';
  const secret = path.some((k) => typeof k === 'string' && isSensitiveName(k) && !keyPathFields.has(k));
  if (secret) return 'a value, not shown: secret';
  const last = path.at(-1);
  if (typeof value === 'string' && typeof last === 'string' && /url$/i.test(last) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    return 'a value that is not a URL, not shown: it may hold a secret';
  // A unix socket's path is no secret, and names the mistake; a web URL's path can be its secret
  // (a webhook's token), so only its origin is shown.
  if (typeof value === 'string') return JSON.stringify(redactText(/^unix:/i.test(value) ? value : redactUrl(value, { hidePath: true })));
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value && typeof value === 'object') return 'a mapping';
  return JSON.stringify(value) ?? String(value);
}

/**
 * Validates a configuration; the error names each field, what was expected and what was given,
 * except the value of a secret field (tokens), a URL's credentials and whole mappings.
 */
export function parseConfig(input: ConfigInput): Config {
  const res = configSchema.safeParse(input);
  if (res.success) return res.data;
  const lines = res.error.issues.map((i) => {
    const field = i.path.join('.') || '(config)';
    const value = i.path.reduce<unknown>(
      (o, k) => (o && typeof o === 'object' ? (o as Record<string | number, unknown>)[k as string] : undefined),
      input,
    );
    return `${field}: ${i.message} (got ${describeGiven(i.path, value)})`;
  });
  throw new ReflexError('CONFIG_INVALID', redactText(`invalid configuration:\n  ${lines.join('\n  ')}`));
}

/** Reads the `REFLEX_*` / `REDIS_URL` environment variables that map to config fields. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ConfigInput {
  const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  const out: ConfigInput = {
    target: env.REFLEX_TARGET || undefined,
    remote: env.REFLEX_REMOTE || undefined,
    clientCert: env.REFLEX_CLIENT_CERT || undefined,
    clientKey: env.REFLEX_CLIENT_KEY || undefined,
    serverCert: env.REFLEX_SERVER_CERT || undefined,
    serverFingerprint: env.REFLEX_SERVER_FINGERPRINT || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisStartupWaitMs: env.REFLEX_REDIS_STARTUP_WAIT_MS || undefined, // a number of ms or a duration (15s)
    rulesDir: env.REFLEX_RULES || undefined,
    role: (env.REFLEX_ROLE || undefined) as Role | undefined,
    waitForTarget: env.REFLEX_WAIT_FOR_TARGET ? ['1', 'true', 'yes'].includes(env.REFLEX_WAIT_FOR_TARGET.toLowerCase()) : undefined,
    prefix: env.REFLEX_PREFIX || undefined,
    resyncIntervalMs: env.REFLEX_RESYNC_INTERVAL_MS || undefined, // a number of ms or a duration (30s)
    streamLossGraceMs: env.REFLEX_STREAM_LOSS_GRACE_MS || undefined, // a number of ms or a duration (30s)
    logLevel: (env.REFLEX_LOG_LEVEL || undefined) as Config['logLevel'] | undefined,
    httpHost: env.REFLEX_HTTP_HOST || undefined,
    httpPort: num(env.REFLEX_HTTP_PORT),
    stormThreshold: num(env.REFLEX_STORM_THRESHOLD),
    dashboardToken: env.REFLEX_DASHBOARD_TOKEN || undefined,
    dashboardWriteToken: env.REFLEX_DASHBOARD_WRITE_TOKEN || undefined,
    dashboardUsersFile: env.REFLEX_DASHBOARD_USERS_FILE || undefined,
    consoleUrl: env.REFLEX_CONSOLE_URL || undefined,
    history:
      env.REFLEX_HISTORY_STORE || env.REFLEX_HISTORY_DIR
        ? ({
            ...(env.REFLEX_HISTORY_STORE ? { store: env.REFLEX_HISTORY_STORE } : {}),
            ...(env.REFLEX_HISTORY_DIR ? { dir: env.REFLEX_HISTORY_DIR } : {}),
          } as ConfigInput['history'])
        : undefined,
    httpAllowedHosts: env.REFLEX_HTTP_ALLOWED_HOSTS
      ? env.REFLEX_HTTP_ALLOWED_HOSTS.split(',')
          .map((h) => h.trim())
          .filter(Boolean)
      : undefined,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ConfigInput;
}
