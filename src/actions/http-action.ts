import { z } from 'zod';
import { isApiStatus } from '../client/api-error.js';
import { durationMs } from '../config/duration.js';
import { ReflexError } from '../errors/reflex-error.js';
import { redactUrl, REDACTED } from '../log/redaction.js';
import { exchange, type HttpAnswer } from '../notify/http-delivery.js';
import { Secret } from '../notify/secret.js';
import type { ActionContext, ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';
import { fillJson, fillText, namesRoot, templateRoots, unknownPlaceholders, type TemplateValues } from './request-template.js';

/** How much of an answer's body the audit keeps. */
export const auditedBodyBytes = 2048;

/** A secret named instead of written: read from the worker's environment or a file when the action runs, never stored. */
const secretRef = z.union([z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })]);
type SecretRef = z.infer<typeof secretRef>;

/** Params of the http action. */
export const httpParamsSchema = z
  .strictObject({
    /** `http://` or `https://`, with placeholders (values URL-encoded); or `{ env }` / `{ file }` for a URL that holds a token. */
    url: z.union([z.string().regex(/^https?:\/\/\S+$/i, 'an http:// or https:// URL'), secretRef]),
    /** Default POST. */
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('POST'),
    /** Header values as text, or `{ env }` / `{ file }` for secrets (an Authorization token). */
    headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name'), z.union([z.string(), secretRef])).default({}),
    /**
     * The body: text, or JSON (an object or array, sent as application/json), with placeholders
     * `{event.…}`, `{instance.…}`, `{incident.…}` in its strings. Default: none.
     */
    body: z.unknown().optional(),
    /** The whole exchange's timeout: ms or a duration (`10s`). Default 10 s. */
    timeout: durationMs(z.number().int().min(1).max(300_000)).default(10_000),
    /** The statuses that count as success. Default: any 2xx. */
    expect: z.array(z.number().int().min(100).max(599)).min(1).optional(),
  })
  .superRefine((p, ctx) => {
    const bad = unknownPlaceholders([p.url, p.body]);
    if (bad.length)
      ctx.addIssue({
        code: 'custom',
        path: ['body'],
        message: `unknown placeholder(s) ${bad.join(', ')}; a placeholder starts with ${templateRoots.join(', ')} (e.g. {event.kind}, {instance.status}, {incident.id})`,
      });
  });
export type HttpParams = z.output<typeof httpParamsSchema>;

/** Reads a named secret; CONFIG_INVALID saying which param needs it (never a value) when it cannot be read. */
function readSecret(ref: SecretRef, what: string): Secret {
  try {
    return 'env' in ref ? Secret.fromEnv(ref.env) : Secret.fromFile(ref.file);
  } catch (err) {
    throw new ReflexError('CONFIG_INVALID', `http action ${what}: ${(err as Error).message}`, { cause: err });
  }
}

/** What the placeholders are filled from; the instance is read only when a placeholder names it. */
async function templateValues(ctx: ActionContext<HttpParams>): Promise<TemplateValues> {
  const job = ctx.job;
  const incident = {
    id: job?.correlationId,
    rule: job?.rule,
    target: job?.target,
    project: job?.project,
    location: job?.location,
    instance: ctx.instance,
  };
  let instance: unknown;
  if (namesRoot([ctx.params.url, ctx.params.body], 'instance')) {
    instance = await ctx.client.getInstance(ctx.instance).then(
      (r) => r.value,
      (err: unknown) => {
        if (isApiStatus(err, 404)) return undefined;
        throw err;
      },
    );
  }
  return { event: job?.event, instance, incident };
}

function succeeded(status: number, expect: number[] | undefined): boolean {
  return expect ? expect.includes(status) : status >= 200 && status < 300;
}

/** The error of an answer outside `expect`: a 5xx and a 429 are worth a retry, any other answer is final. */
function answerError(answer: HttpAnswer, said: string): ReflexError {
  const detail = `${said} answered ${answer.status}${answer.body ? `: ${answer.body.slice(0, 300)}` : ''}`;
  if (answer.status === 429) return new ReflexError('HTTP_RATE_LIMITED', detail);
  if (answer.status >= 500) return new ReflexError('HTTP_SERVER_ERROR', detail);
  return new ReflexError('HTTP_REJECTED', detail);
}

/**
 * Calls any URL (a runbook's webhook, a load balancer's API): method, headers, a templated body,
 * secrets named as receivers name theirs (`{ env }`, `{ file }`), kept out of the audit and the
 * logs. It does not touch the instance (no lock, no re-check). Each exchange is audited with
 * method, URL (redacted), status, duration and the first 2 KiB of the answer. An answer outside
 * `expect` (default 2xx) fails it: a 5xx, a 429, a timeout or a failed connection are retried by
 * the retry policy; any other answer is final. Redirects are not followed. Not idempotent: the
 * job id (one per rule and incident) is what keeps it from running twice.
 */
export const httpAction = builtinAction({
  name: 'http',
  touchesInstance: false,
  describe: 'call any URL (params: url, method? POST, headers?, body? with {event.…} {instance.…} {incident.…}, timeout? 10s, expect? 2xx)',
  params: httpParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const p = ctx.params;
    const values = await templateValues(ctx);
    const json = p.body !== undefined && typeof p.body !== 'string';
    const body = p.body === undefined ? undefined : json ? JSON.stringify(fillJson(p.body, values)) : fillText(p.body as string, values);
    const shownUrl =
      typeof p.url === 'string'
        ? redactUrl(fillText(p.url, values, encodeURIComponent))
        : `${REDACTED} (${'env' in p.url ? `env:${p.url.env}` : `file:${p.url.file}`})`;
    const said = `${p.method} ${shownUrl}`;
    if (ctx.dryRun) {
      await ctx.audit({
        type: 'call',
        summary: `dry-run: would ${said}`,
        method: p.method,
        url: shownUrl,
        dryRun: true,
        ...(body !== undefined ? { request: body.slice(0, auditedBodyBytes) } : {}),
      });
      return { result: 'dry-run', summary: `would ${said}` };
    }
    const secretUrl = typeof p.url === 'string' ? undefined : readSecret(p.url, 'url');
    const secrets: Secret[] = secretUrl ? [secretUrl] : [];
    const url = secretUrl ? secretUrl.reveal() : fillText(p.url as string, values, encodeURIComponent);
    const headers: Record<string, string> = {
      'user-agent': 'reflex-http/1',
      ...(body !== undefined ? { 'content-type': json ? 'application/json' : 'text/plain; charset=utf-8' } : {}),
    };
    for (const [name, v] of Object.entries(p.headers)) {
      if (typeof v === 'string') headers[name.toLowerCase()] = v;
      else {
        const s = readSecret(v, `header ${name}`);
        secrets.push(s);
        headers[name.toLowerCase()] = s.reveal();
      }
    }
    const scrub = (t: string) => secrets.reduce((acc, s) => s.scrub(acc), t);
    const record = { method: p.method, url: shownUrl, headers: Object.keys(headers) };
    let answer: HttpAnswer;
    try {
      answer = await exchange(url, {
        method: p.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: p.timeout,
        maxBodyBytes: auditedBodyBytes,
        shownUrl,
      });
    } catch (err) {
      const e = err as ReflexError;
      const message = scrub(e.message);
      await ctx.audit({ type: 'call', summary: `${said} failed (${e.code}): ${message}`, ...record, code: e.code });
      throw new ReflexError(e.code, message, { retryable: e.retryable });
    }
    const response = scrub(answer.body);
    const ok = succeeded(answer.status, p.expect);
    await ctx.audit({
      type: 'call',
      summary: `${said} → ${answer.status} in ${answer.durationMs} ms`,
      ...record,
      status: answer.status,
      durationMs: answer.durationMs,
      response,
      truncated: answer.truncated,
    });
    if (!ok) throw answerError({ ...answer, body: response }, said);
    return { result: 'done', summary: `${said} answered ${answer.status}` };
  },
});
