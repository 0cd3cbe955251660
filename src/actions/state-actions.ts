import { z } from 'zod';
import { StatusCode } from '../client/status-code.js';
import type { ActionContext, ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

type StateVerb = 'stop' | 'freeze' | 'unfreeze';

/** Params of the stop action. */
export const stopParamsSchema = z.strictObject({
  /** Kill the instance instead of asking it to shut down. Default false. */
  force: z.boolean().default(false),
  /** Seconds the daemon waits for a clean shutdown (-1: no limit). Default: the daemon's. */
  timeout: z.number().int().min(-1).optional(),
});

/**
 * A level-triggered state change: reads the state first and does nothing when the goal already
 * holds, so a repeated event or a retried job never acts twice.
 */
async function changeState(
  ctx: ActionContext<unknown>,
  verb: StateVerb,
  goal: (code: number) => boolean,
  body: Record<string, unknown>,
): Promise<ActionOutcome> {
  const state = await ctx.client.getInstanceState(ctx.instance);
  if (goal(state.status_code)) return { result: 'skipped', summary: `already ${state.status}; nothing to do` };
  const op = await ctx.client.changeState(ctx.instance, { action: verb, ...body });
  await op.wait();
  return { result: 'done', summary: `${verb} done (was ${state.status})`, operationId: op.id };
}

export const stopAction = builtinAction({
  name: 'stop',
  describe: 'stop the instance (params: force?, timeout? in seconds)',
  params: stopParamsSchema,
  run: (ctx) =>
    changeState(ctx, 'stop', (c) => c === StatusCode.Stopped, {
      force: ctx.params.force,
      ...(ctx.params.timeout !== undefined ? { timeout: ctx.params.timeout } : {}),
    }),
});

export const freezeAction = builtinAction({
  name: 'freeze',
  describe: 'freeze a running instance',
  params: z.strictObject({}),
  run: (ctx) => changeState(ctx, 'freeze', (c) => c === StatusCode.Frozen || c === StatusCode.Stopped, {}),
});

export const unfreezeAction = builtinAction({
  name: 'unfreeze',
  describe: 'unfreeze a frozen instance',
  params: z.strictObject({}),
  run: (ctx) => changeState(ctx, 'unfreeze', (c) => c !== StatusCode.Frozen, {}),
});
