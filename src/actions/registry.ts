import { ReflexError } from '../errors/reflex-error.js';
import type { Action } from './action.js';
import { apiCallAction, patchConfigAction } from './config-actions.js';
import { emitAction } from './emit-action.js';
import { deleteSnapshotAction, restoreAction, snapshotAction } from './snapshot-actions.js';
import { restartAction, startAction } from './start-action.js';
import { housekeepingAction } from './housekeeping-action.js';
import { notifyAction } from './notify-action.js';
import { freezeAction, stopAction, unfreezeAction } from './state-actions.js';

/** Every action a rule may name, looked up here and nowhere else. */
const registry = new Map<string, Action>([startAction, restartAction, stopAction, freezeAction, unfreezeAction, snapshotAction, deleteSnapshotAction, restoreAction, patchConfigAction, apiCallAction, notifyAction, emitAction, housekeepingAction].map((a) => [a.name, a]));

export function getAction(name: string): Action {
  const action = registry.get(name);
  if (!action) throw new ReflexError('ACTION_UNKNOWN', `unknown action "${name}"; known: ${[...registry.keys()].join(', ')}`);
  return action;
}

export function actionNames(): string[] {
  return [...registry.keys()];
}
