import type { ActionContext } from './action.js';
import { builtinAction } from './define-action.js';
import { emittedEventId, publishRuleEvent } from './emit-action.js';
import { housekeepingParamsSchema, runHousekeepingSteps, type HousekeepingParams } from '../schedules/housekeeping/housekeeping-steps.js';

/**
 * The `housekeeping` action: runs the steps a schedule's tick planned for one instance
 * (src/schedules/housekeeping/housekeeping-steps.ts holds what they do) through the executor like
 * every action, and publishes the schedule's before/after events.
 */
export const housekeepingAction = builtinAction({
  name: 'housekeeping',
  describe: 'run the steps a schedule planned for the instance (internal: queued by schedule ticks)',
  params: housekeepingParamsSchema,
  run: (ctx) => runHousekeepingSteps(ctx, ctx.params, (when, extra) => announce(ctx, ctx.params, when, extra)),
});

/** Publishes the schedule's before/after event for this instance (once per tick and instance: the id says so). */
async function announce(
  ctx: ActionContext<unknown>,
  params: HousekeepingParams,
  when: 'before' | 'after',
  extra: Record<string, unknown>,
): Promise<void> {
  const name = params.events?.[when];
  const job = ctx.job;
  if (!name || !job) return;
  if (!ctx.publish) {
    await ctx.audit({ type: 'call', summary: `${params.schedule}: ${when} event ${name} not published: no events queue in this process` });
    return;
  }
  const id = emittedEventId(job.rule, name, `${job.correlationId}|${job.project}/${ctx.instance}`);
  await publishRuleEvent(ctx, job, { id, name, payload: { schedule: params.schedule, steps: params.plan.steps, ...extra }, chain: [job.rule] });
}
