import { ReflexError } from '../errors/reflex-error.js';
import type { Action } from './action.js';
import { apiCallAction, patchConfigAction } from './config-actions.js';
import type { DefinedAction } from './define-action.js';
import { emitAction } from './emit-action.js';
import { execAction } from './exec-action.js';
import { httpAction } from './http-action.js';
import { deleteSnapshotAction, restoreAction, snapshotAction } from './snapshot-actions.js';
import { restartAction, startAction } from './start-action.js';
import { housekeepingAction } from './housekeeping-action.js';
import { notifyAction } from './notify-action.js';
import { freezeAction, stopAction, unfreezeAction } from './state-actions.js';

/** Every built-in action, in the order `reflex rules list` and errors name them. */
const builtins: readonly Action[] = [
  startAction,
  restartAction,
  stopAction,
  freezeAction,
  unfreezeAction,
  snapshotAction,
  deleteSnapshotAction,
  restoreAction,
  patchConfigAction,
  apiCallAction,
  httpAction,
  execAction,
  notifyAction,
  emitAction,
  housekeepingAction,
];

/**
 * The actions a rule set may name, looked up here and nowhere else: the built-ins and the actions
 * defined in one rules folder. Built per loaded rule set ({@link createActionRegistry}) and swapped
 * with it on a reload; never a global that one folder's actions would leak into (several Reflex
 * instances may share a process).
 */
export class ActionRegistry {
  private readonly byName: ReadonlyMap<string, Action>;

  constructor(actions: readonly Action[]) {
    this.byName = new Map(actions.map((a) => [a.name, a]));
  }

  /** The action of that name; ACTION_UNKNOWN (naming the known ones) when there is none. */
  get(name: string): Action {
    const action = this.byName.get(name);
    if (!action) throw new ReflexError('ACTION_UNKNOWN', `unknown action "${name}"; known: ${this.names().join(', ')}`);
    return action;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The actions defined in the rules folder (not built in). */
  userDefined(): Action[] {
    return [...this.byName.values()].filter((a) => !builtins.includes(a));
  }
}

/** The built-in actions alone: for processes and tests with no rules folder. */
export const builtinActions = new ActionRegistry(builtins);

/** Why a user-defined action cannot join the registry (its name is taken), or undefined when it can. */
export function nameClash(action: DefinedAction, taken: ReadonlyMap<string, DefinedAction>): string | undefined {
  if (builtinActions.has(action.name)) return `action name "${action.name}" is a built-in action's; choose another`;
  const other = taken.get(action.name);
  if (!other) return undefined;
  return `action name "${action.name}" is already used by the action defined at ${other.definedAt ? `${other.definedAt.file}:${other.definedAt.line}` : 'another file'}`;
}

/** The registry of a rules folder: the built-ins and its user-defined actions (names checked with {@link nameClash} first). */
export function createActionRegistry(userDefined: readonly Action[]): ActionRegistry {
  return userDefined.length ? new ActionRegistry([...builtins, ...userDefined]) : builtinActions;
}
