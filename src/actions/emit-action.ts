import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';
import type { RuleEvent } from '../events/canonical-event.js';
import type { ActionContext, ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

/** Params a rule may give the emit action. */
export const emitParamsSchema = z.strictObject({
  /** The name other rules trigger on: `{ kind: 'rule.event', name: ['…'] }`. */
  name: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'use lowercase letters, digits, dots and dashes'),
  /** Free-form data for the rules that trigger on it. Default {}. */
  payload: z.record(z.string(), z.unknown()).default({}),
});

/** Follow-up events one incident may lead to in a row; the next one is dropped and audited. */
export const maxHops = 3;

/** The id of the event a rule emits for an incident: the same rule, name and incident give the same id. */
export function emittedEventId(rule: string, name: string, incident: string): string {
  return createHash('sha256').update(`emit|${rule}|${name}|${incident}`).digest('hex').slice(0, 32);
}

/**
 * Publishes a follow-up event (`rule.event`) into the events queue, so other rules can trigger on
 * it. Params: `{ name, payload? }`. The job id comes from the rule, the name and the incident, so a
 * retried action publishes once. Loops are cut: a rule that already emitted earlier in the same
 * chain, or a chain longer than {@link maxHops}, emits nothing and says so in the audit log.
 */
/**
 * Publishes a rule event of `job`'s incident on the events queue (idempotent: its job id is the
 * event id), as the `emit` action and a schedule's before/after events do.
 */
export async function publishRuleEvent(
  ctx: ActionContext<unknown>,
  job: NonNullable<ActionContext['job']>,
  e: { id: string; name: string; payload: Record<string, unknown>; chain: string[] },
): Promise<void> {
  const event: RuleEvent = {
    kind: 'rule.event',
    id: e.id,
    target: job.target,
    location: job.location,
    project: job.project,
    timestamp: new Date().toISOString(),
    synthetic: false,
    name: e.name,
    instance: ctx.instance,
    payload: e.payload,
    rule: job.rule,
    causedBy: job.correlationId,
    chain: e.chain,
  };
  await ctx.publish!(event, `emit-${e.id}`);
}

export const emitAction = builtinAction({
  name: 'emit',
  touchesInstance: false,
  describe: 'publish a follow-up event other rules can trigger on (params: name, payload?)',
  params: emitParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const { name, payload } = ctx.params;
    const job = ctx.job;
    if (!job) throw new ReflexError('CONFIG_INVALID', 'the emit action needs the job it runs for (no job context)');
    const chain = [...job.chain, job.rule];
    const path = chain.join(' → ');
    if (job.chain.includes(job.rule)) {
      return { result: 'skipped', summary: `dropped ${name}: loop cut, rule ${job.rule} already emitted earlier in this chain (${path})` };
    }
    if (chain.length > maxHops) {
      return {
        result: 'skipped',
        summary: `dropped ${name}: loop cut, the chain would be ${chain.length} hops long, more than ${maxHops} (${path})`,
      };
    }
    const id = emittedEventId(job.rule, name, job.correlationId);
    if (ctx.dryRun) return { result: 'dry-run', summary: `would emit ${name} (event ${id}, hop ${chain.length})` };
    if (!ctx.publish) throw new ReflexError('CONFIG_INVALID', 'the emit action needs the events queue (none in this process)');
    await publishRuleEvent(ctx, job, { id, name, payload, chain });
    return { result: 'done', summary: `emitted ${name} (event ${id}, hop ${chain.length})` };
  },
});
