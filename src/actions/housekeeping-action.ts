import { z } from 'zod';
import { isApiStatus } from '../client/api-error.js';
import { StatusCode } from '../client/status-code.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Operation } from '../client/operation.js';
import { actionParams, type Action, type ActionContext, type ActionOutcome } from './action.js';

const stepSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('create-snapshot'), name: z.string().min(1), expiresAt: z.string().optional(), dryRun: z.boolean(), describe: z.string() }),
  z.object({ kind: z.literal('delete-snapshot'), name: z.string().min(1), dryRun: z.boolean(), describe: z.string() }),
  z.object({ kind: z.literal('delete-instance'), dryRun: z.boolean(), describe: z.string() }),
]);

/**
 * Params of the `housekeeping` action: the steps a schedule's tick planned for one instance, in
 * order, and the plan they came from (recorded with every call).
 */
export const housekeepingParamsSchema = z.object({
  schedule: z.string(),
  steps: z.array(stepSchema).min(1),
  plan: z.object({ order: z.string(), steps: z.array(z.string()), keep: z.array(z.string()) }),
});
export type HousekeepingParams = z.infer<typeof housekeepingParamsSchema>;
type Step = z.infer<typeof stepSchema>;

/** The call of a step, under the same action names rules use (snapshot, delete-snapshot, delete). */
function callOf(step: Step, instance: string): { method: string; path: string; action: string } {
  const i = encodeURIComponent(instance);
  switch (step.kind) {
    case 'create-snapshot':
      return { method: 'POST', path: `/1.0/instances/${i}/snapshots`, action: 'snapshot' };
    case 'delete-snapshot':
      return { method: 'DELETE', path: `/1.0/instances/${i}/snapshots/${encodeURIComponent(step.name)}`, action: 'delete-snapshot' };
    case 'delete-instance':
      return { method: 'DELETE', path: `/1.0/instances/${i}`, action: 'delete' };
  }
}

/**
 * Runs the steps a schedule's tick planned for one instance, in order, each through the same call
 * path as every action (self-marked, audited with its plan). A snapshot that cannot be taken stops
 * the steps after it (retention counted on it); the job is then retried by the retry policy. A
 * retried job is idempotent: a snapshot this job already took is not taken again, a deletion whose
 * target is gone is done.
 */
export const housekeepingAction: Action = {
  name: 'housekeeping',
  describe: 'run the steps a schedule planned for the instance (internal: queued by schedule ticks)',
  async run(ctx): Promise<ActionOutcome> {
    const parsed = actionParams('housekeeping', housekeepingParamsSchema, ctx.params);
    const { steps, plan, schedule } = parsed;
    let done = 0;
    let dry = 0;
    for (const step of steps) {
      const d = callOf(step, ctx.instance);
      const record = { step: step.describe, plan, schedule };
      if (step.dryRun || ctx.dryRun) {
        await ctx.audit({ type: 'call', summary: `dry-run: would ${d.method} ${ctx.client.pathOf(d.path)} (${step.describe})`, method: d.method, path: ctx.client.pathOf(d.path), dryRun: true, ...record });
        dry++;
        continue;
      }
      if (await alreadyDone(ctx, step)) {
        await ctx.audit({ type: 'call', summary: `${d.method} ${ctx.client.pathOf(d.path)} (${step.describe}): already done`, method: d.method, path: ctx.client.pathOf(d.path), ...record });
        done++;
        continue;
      }
      try {
        await ctx.call({ ...d, record }, () => send(ctx, step));
      } catch (err) {
        // Someone (the daemon's own expiry pruning, another tool) deleted it first: the goal holds.
        if (step.kind !== 'create-snapshot' && isApiStatus(err, 404)) {
          done++;
          continue;
        }
        throw err;
      }
      done++;
    }
    if (done === 0) return { result: 'dry-run', summary: `${schedule}: ${dry} dry-run step(s)` };
    return { result: 'done', summary: `${schedule}: ${done} change(s) made${dry ? `, ${dry} dry-run` : ''}` };
  },
};

function send(ctx: ActionContext, step: Step): Promise<Operation> {
  switch (step.kind) {
    case 'create-snapshot':
      return ctx.client.createSnapshot(ctx.instance, { name: step.name, ...(step.expiresAt ? { expiresAt: new Date(step.expiresAt) } : {}) });
    case 'delete-snapshot':
      return ctx.client.deleteSnapshot(ctx.instance, step.name);
    case 'delete-instance':
      return ctx.client.deleteInstance(ctx.instance);
  }
}

/** Whether an earlier attempt of this job already made the step's change. */
async function alreadyDone(ctx: ActionContext, step: Step): Promise<boolean> {
  try {
    if (step.kind === 'create-snapshot') {
      await ctx.client.getSnapshot(ctx.instance, step.name);
      return true;
    }
    if (step.kind === 'delete-snapshot') {
      await ctx.client.getSnapshot(ctx.instance, step.name);
      return false;
    }
    const state = await ctx.client.getInstanceState(ctx.instance);
    if (state.status_code !== StatusCode.Stopped) throw new ReflexError('API_CONFLICT', `${ctx.instance} is ${state.status} again; not deleting a running instance`, { retryable: false });
    return false;
  } catch (err) {
    if (isApiStatus(err, 404)) return step.kind !== 'create-snapshot';
    throw err;
  }
}
