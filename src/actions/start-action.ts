import { z } from 'zod';
import { StatusCode } from '../client/status-code.js';
import type { ActionContext, ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

async function changeState(ctx: ActionContext<unknown>, action: 'start' | 'stop' | 'unfreeze', body: Record<string, unknown> = {}): Promise<string> {
  const op = await ctx.client.changeState(ctx.instance, { action, ...body });
  await op.wait();
  return op.id;
}

/**
 * Brings an instance to Running. Level-triggered: re-reads the state first and does nothing when
 * it is already Running; unfreezes a Frozen one; force-stops an Error (112) one before starting; a
 * start refused while someone else's started it ends as a skip (Running is what it was for).
 * No params.
 */
export const startAction = builtinAction({
  name: 'start',
  restarts: true,
  describe: 'ensure the instance is Running (start it, unfreeze it, or force-stop then start it from Error)',
  params: z.strictObject({}),
  async run(ctx): Promise<ActionOutcome> {
    const state = ctx.observed ?? (await ctx.client.getInstanceState(ctx.instance));
    if (state.status_code === StatusCode.Running || state.status_code === StatusCode.Ready) {
      return { result: 'skipped', summary: `already ${state.status}; nothing to do` };
    }
    if (state.status_code === StatusCode.Frozen) {
      const id = await changeState(ctx, 'unfreeze');
      return { result: 'done', summary: 'unfrozen', operationId: id };
    }
    if (state.status_code === StatusCode.Error) await changeState(ctx, 'stop', { force: true });
    try {
      const id = await changeState(ctx, 'start');
      return { result: 'done', summary: `started (was ${state.status})`, operationId: id };
    } catch (err) {
      // Refused because someone else's start ran first (an operator's, between the read and the
      // call): the instance is where this action brings it; nothing failed.
      const now = await ctx.client.getInstanceState(ctx.instance).catch(() => undefined);
      if (now?.status_code !== StatusCode.Running) throw err;
      return { result: 'skipped', summary: `already Running: started by someone else while this start was sent (${(err as Error).message})` };
    }
  },
});

/** Params of the restart action. */
export const restartParamsSchema = z.strictObject({
  /** Kill the instance instead of asking it to shut down. Default false. */
  force: z.boolean().default(false),
});

/** Restarts an instance (forced when `params.force`). */
export const restartAction = builtinAction({
  name: 'restart',
  restarts: true,
  describe: 'restart the instance (params: force?)',
  params: restartParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const op = await ctx.client.changeState(ctx.instance, { action: 'restart', force: ctx.params.force });
    await op.wait();
    return { result: 'done', summary: 'restarted', operationId: op.id };
  },
});
