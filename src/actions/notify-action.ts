import { z } from 'zod';
import type { ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';
import { ReflexError } from '../errors/reflex-error.js';
import { severitySchema } from '../alerts/alert.js';
import { Alerts, type AlertRecord } from '../alerts/alerts.js';
import type { Notifier } from '../notify/notifier.js';

/** Params a rule may give the notify action. */
export const notifyParamsSchema = z.strictObject({
  /** Send to this receiver instead of routing. Default: routed. */
  receiver: z.string().optional(),
  /** Default `warning`. */
  severity: severitySchema.default('warning'),
  /** What happened. Default `rule notification for <instance>`. */
  summary: z.string().optional(),
  /** Alert kind (routing and grouping key). Default `rule.notify`. */
  kind: z.string().default('rule.notify'),
  /** Audit correlation id of the incident, so the message links its trail. Default: a new one. */
  correlationId: z.string().optional(),
  labels: z.record(z.string(), z.string()).default({}),
  /**
   * Resolve the alert of this `kind` about the instance instead of raising one: the rule's own
   * condition ends the episode it started (e.g. a rule on the instance Running again). Default false.
   */
  resolve: z.boolean().default(false),
});

/**
 * Raises an alert about the instance through the configured receivers. Params:
 * `{ receiver?, severity? = 'warning', summary?, kind? = 'rule.notify', correlationId?, labels?, resolve? = false }`;
 * with `resolve: true` it resolves the firing alert of that kind about the instance instead.
 */
export const notifyAction = builtinAction({
  name: 'notify',
  touchesInstance: false,
  describe: 'send an alert about the instance to the notification receivers (params: receiver?, severity?, summary?)',
  params: notifyParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const p = ctx.params;
    const summary = p.summary ?? `rule notification for ${ctx.instance}`;
    const to = p.receiver ?? 'the routed receivers';
    if (ctx.dryRun)
      return {
        result: 'dry-run',
        summary: p.resolve ? `would resolve the ${p.kind} alert of ${ctx.instance}` : `would notify ${to} (${p.severity}): ${summary}`,
      };
    if (!ctx.notifier) throw new ReflexError('CONFIG_INVALID', 'the notify action needs notifications configured (no notifier in this process)');
    const subject = { target: ctx.client.target.url, project: ctx.client.project ?? 'default', instance: ctx.instance };
    // The record goes in the job's trail (the action's audit adds its correlation id, target and instance).
    const audit = {
      append: async ({ correlationId: _c, target: _t, instance: _i, ...record }: AlertRecord) => {
        await ctx.audit(record);
        return 'appended';
      },
      // Raised without a once-key: nothing to give back, nothing recorded under one.
      forget: async () => undefined,
      recorded: async () => false,
    };
    const alerts = new Alerts({ notifier: ctx.notifier, audit });
    if (p.resolve) {
      const why = p.summary ?? `resolved by a rule for ${ctx.instance}`;
      const resolved = await alerts.resolveFiring(
        p.kind,
        subject,
        { summary: why, outcome: 'recovered' },
        { record: { summary: `alert ${p.kind} resolved: ${why}` } },
      );
      if (!resolved) return { result: 'skipped', summary: `no ${p.kind} alert of ${ctx.instance} was firing` };
      return { result: 'done', summary: `alert ${resolved.fingerprint} resolved` };
    }
    const alert = await alerts.raise(
      {
        kind: p.kind,
        severity: p.severity,
        summary,
        ...subject,
        correlationId: p.correlationId ?? `notify:${ctx.instance}:${Date.now()}`,
        labels: p.labels,
      },
      { receiver: p.receiver, record: { summary: `alert ${p.kind} (${p.severity}) raised for ${to}: ${summary}` } },
    );
    return { result: 'done', summary: `alert ${alert!.fingerprint} queued for ${to}` };
  },
});
