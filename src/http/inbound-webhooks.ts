import { createHash, timingSafeEqual } from 'node:crypto';
import type { Queue } from 'bullmq';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import {
  AlertMappingError,
  alertmanagerEvents,
  alertmanagerPayloadSchema,
  payloadProblem,
  webhookEvents,
  webhookPayloadSchema,
  type AlertMapping,
} from '../events/alert-event.js';
import type { AlertEvent } from '../events/canonical-event.js';
import type { EventJob } from '../events/event-job.js';
import { keepRejected, type RejectedLimits } from '../events/rejected-events.js';
import { parseBoundedJson } from '../input/json-bounds.js';
import { withDeadline, type RedisConnection } from '../redis/connect.js';
import type { InboundConfig } from '../config/config.js';
import { ReflexError } from '../errors/reflex-error.js';
import { Secret } from '../notify/secret.js';
import { verifyWebhookSignature, webhookKey } from '../notify/webhook-signature.js';

/** What the inbound endpoints need. An endpoint without its secret answers 404. */
export interface InboundSources {
  /** The events queue: accepted alerts go where daemon events go (archived, audited, decided). */
  queue: Queue;
  /** Where a malformed body is kept (`KeySpace.rejected`), with an audit record. */
  redis: RedisConnection;
  rejectedKey: string;
  /** Bounds of the rejected stream on append. Default: {@link keepRejected}'s. */
  rejectedLimits?: RejectedLimits;
  audit: AuditLog;
  mapping: AlertMapping;
  /** `POST /hooks/alertmanager`: Bearer token, or the basic-auth password. None: endpoint off. */
  alertmanagerToken?: Secret;
  /** `POST /hooks/webhook`: Standard Webhooks secrets (`whsec_…`). None: endpoint off. */
  webhookSecrets?: readonly Secret[];
  /** Default 1 048 576 bytes. */
  maxBodyBytes?: number;
  /** Signed webhook timestamp tolerance, seconds. Default 300. */
  toleranceSec?: number;
  /** How long queueing may take before the answer is 503 (Redis unreachable). Default 5000 ms. */
  enqueueTimeoutMs?: number;
  logger: Logger;
}

const digest = (text: string) => createHash('sha256').update(`reflex-inbound:${text}`).digest();

/** Compares in constant time (digests first, so lengths never differ). */
function sameSecret(given: string, secret: Secret): boolean {
  return timingSafeEqual(digest(given), digest(secret.reveal()));
}

/** The credential of `Authorization: Bearer T` or the password of `Authorization: Basic base64(user:T)`. */
function credentialOf(c: Context): string | undefined {
  const header = c.req.header('authorization') ?? '';
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  if (bearer) return bearer[1]!.trim();
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!basic) return undefined;
  const text = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? undefined : text.slice(colon + 1);
}

function disabled(what: string, field: string) {
  return (c: Context) => c.text(`${what} disabled: no secret configured (inbound.${field} in the config file)\n`, 404);
}

/**
 * `POST /hooks/alertmanager` and `POST /hooks/webhook` (mount under `/hooks`): each alert of an
 * authenticated body becomes an `alert` event on the events queue before the answer, so a 200 means
 * it is durable. 401 without valid auth (nothing kept), 413 above the size bound, 400 for a body
 * that is not what the endpoint takes (kept in the rejected stream and audited), 503 when Redis
 * cannot take it in time (Alertmanager retries; the job ids make a retry one event).
 */
export function inboundWebhooks(src: InboundSources): Hono {
  const app = new Hono();
  const limit = bodyLimit({
    maxSize: src.maxBodyBytes ?? 1_048_576,
    onError: (c) => c.json({ error: `body larger than ${src.maxBodyBytes ?? 1_048_576} bytes` }, 413),
  });

  const token = src.alertmanagerToken;
  if (!token) app.all('/alertmanager', disabled('Alertmanager endpoint', 'alertmanager.tokenEnv/tokenFile'));
  else {
    app.post(
      '/alertmanager',
      async (c, next) => {
        const given = credentialOf(c);
        if (given === undefined || !sameSecret(given, token)) {
          c.header('WWW-Authenticate', 'Bearer realm="reflex", Basic realm="reflex"');
          return c.json(
            {
              error:
                given === undefined
                  ? 'authentication required (Authorization: Bearer <token>, or basic auth with the token as password)'
                  : 'wrong credentials',
            },
            401,
          );
        }
        return next();
      },
      limit,
      async (c) => {
        const body = await c.req.text();
        return accept(c, 'alertmanager', body, alertmanagerPayloadSchema, (p, at) => alertmanagerEvents(p, src.mapping, at));
      },
    );
  }

  const secrets = src.webhookSecrets;
  if (!secrets?.length) app.all('/webhook', disabled('generic webhook endpoint', 'webhook.secretEnv/secretFile'));
  else {
    app.post('/webhook', limit, async (c) => {
      const body = await c.req.text();
      const check = verifyWebhookSignature({
        secret: secrets.map((s) => s.reveal()),
        rawBody: body,
        headers: c.req.raw.headers,
        toleranceSec: src.toleranceSec,
      });
      if (!check.ok) {
        const why = {
          missing: 'webhook-id, webhook-timestamp and webhook-signature headers required',
          malformed: 'malformed webhook-timestamp or webhook-signature',
          stale: `webhook-timestamp too far from now (more than ${src.toleranceSec ?? 300} s): a replay, or a clock off`,
          mismatch: 'signature does not match',
        }[check.reason];
        return c.json({ error: why }, 401);
      }
      return accept(c, 'webhook', body, webhookPayloadSchema, (p, at) => webhookEvents(p, src.mapping, check, at));
    });
  }

  /** Parses, maps and queues one authenticated body. */
  async function accept<S extends z.ZodType>(
    c: Context,
    source: AlertEvent['source'],
    body: string,
    schema: S,
    toEvents: (payload: z.output<S>, at: Date) => AlertEvent[],
  ) {
    const receivedAt = new Date();
    // Bounded before it is parsed: a body nested thousands deep must be refused, not overflow a walk of it.
    const json = parseBoundedJson(body);
    if (!json.ok) return reject(c, source, body, json.problem);
    const parsed = schema.safeParse(json.value);
    if (!parsed.success) return reject(c, source, body, payloadProblem(parsed.error));
    let events: AlertEvent[];
    try {
      events = toEvents(parsed.data, receivedAt);
    } catch (err) {
      if (err instanceof AlertMappingError) return reject(c, source, body, err.message);
      throw err;
    }
    const jobs = events.map((event) => ({
      name: 'alert',
      data: { kind: 'synthetic', target: event.target, event, receivedAt: receivedAt.getTime() } satisfies EventJob,
      opts: { jobId: `alert-${event.id}` },
    }));
    try {
      await withDeadline(src.queue.addBulk(jobs), src.enqueueTimeoutMs ?? 5_000);
    } catch (err) {
      src.logger.warn({ err, source, alerts: events.length }, 'inbound alerts not queued (Redis unreachable?); answered 503, the sender retries');
      c.header('Retry-After', '10');
      return c.json({ error: 'could not queue the alerts (Redis unreachable); retry later' }, 503);
    }
    src.logger.debug({ source, alerts: events.length }, 'inbound alerts queued');
    return c.json(
      { accepted: events.length, events: events.map((e) => ({ id: e.id, alertname: e.alertname, status: e.status, instance: e.instance ?? null })) },
      200,
    );
  }

  async function reject(c: Context, source: AlertEvent['source'], body: string, problem: string) {
    const reason = `POST /hooks/${source}: ${problem}`;
    const hash = createHash('sha256').update(`${source}|${body}`).digest('hex').slice(0, 32);
    try {
      await withDeadline(
        keepRejected(
          src.redis,
          src.rejectedKey,
          src.audit,
          { target: src.mapping.defaultTarget, reason, raw: body, hash, receivedAt: Date.now() },
          src.rejectedLimits,
        ),
        src.enqueueTimeoutMs ?? 5_000,
      );
    } catch (err) {
      src.logger.warn({ err, reason }, 'malformed inbound body not kept (Redis unreachable?)');
    }
    src.logger.warn({ reason }, 'malformed inbound body rejected and kept for inspection');
    return c.json({ error: problem }, 400);
  }

  return app;
}

/**
 * The secrets of the configured inbound endpoints, read now (start-up fails with CONFIG_INVALID
 * naming the variable or file when one is missing, or a webhook secret is not `whsec_<base64>`).
 */
export function inboundSecrets(config: InboundConfig | undefined): Pick<InboundSources, 'alertmanagerToken' | 'webhookSecrets'> {
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : typeof v === 'string' ? [v] : v);
  const am = config?.alertmanager;
  const alertmanagerToken = am
    ? am.tokenEnv !== undefined
      ? read('alertmanager.tokenEnv', () => Secret.fromEnv(am.tokenEnv!))
      : read('alertmanager.tokenFile', () => Secret.fromFile(am.tokenFile!))
    : undefined;
  const wh = config?.webhook;
  const webhookSecrets = wh
    ? [
        ...list(wh.secretEnv).map((e) => read('webhook.secretEnv', () => Secret.fromEnv(e))),
        ...list(wh.secretFile).map((f) => read('webhook.secretFile', () => Secret.fromFile(f))),
      ]
    : undefined;
  for (const s of webhookSecrets ?? []) {
    const key = webhookKey(s.reveal());
    if ('problem' in key) throw new ReflexError('CONFIG_INVALID', `inbound.webhook: the secret of ${s.source} ${key.problem}`);
  }
  return { ...(alertmanagerToken ? { alertmanagerToken } : {}), ...(webhookSecrets?.length ? { webhookSecrets } : {}) };
}

/** Reads one secret, its error naming the config field. */
function read(field: string, fn: () => Secret): Secret {
  try {
    return fn();
  } catch (err) {
    throw new ReflexError('CONFIG_INVALID', `inbound.${field}: ${(err as Error).message}`, { cause: err });
  }
}
