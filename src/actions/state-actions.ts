import { StatusCode } from '../client/status-code.js';
import type { Action, ActionContext, ActionOutcome } from './action.js';

type StateVerb = 'stop' | 'freeze' | 'unfreeze';

/**
 * A level-triggered state change: reads the state first and does nothing when the goal already
 * holds, so a repeated event or a retried job never acts twice.
 */
function stateAction(verb: StateVerb, goal: (code: number) => boolean, describe: string): Action {
  return {
    name: verb,
    describe,
    async run(ctx: ActionContext): Promise<ActionOutcome> {
      const state = await ctx.client.getInstanceState(ctx.instance);
      if (goal(state.status_code)) return { result: 'skipped', summary: `already ${state.status}; nothing to do` };
      if (ctx.dryRun) return { result: 'dry-run', summary: `would ${verb} (instance is ${state.status})` };
      const body = verb === 'stop' ? { force: ctx.params.force === true, ...(typeof ctx.params.timeout === 'number' ? { timeout: ctx.params.timeout } : {}) } : {};
      const op = await ctx.call({ method: 'PUT', path: `/1.0/instances/${ctx.instance}/state`, action: verb }, () => ctx.client.changeState(ctx.instance, { action: verb, ...body }));
      return { result: 'done', summary: `${verb} done (was ${state.status})`, operationId: op?.id };
    },
  };
}

export const stopAction = stateAction('stop', (c) => c === StatusCode.Stopped, 'stop the instance (params: force, timeout)');
export const freezeAction = stateAction('freeze', (c) => c === StatusCode.Frozen || c === StatusCode.Stopped, 'freeze a running instance');
export const unfreezeAction = stateAction('unfreeze', (c) => c !== StatusCode.Frozen, 'unfreeze a frozen instance');
