import type { z } from 'zod';
import { redact } from '../audit/redact.js';
import { ReflexError } from '../errors/reflex-error.js';
import { stackPlaces } from '../errors/stack-place.js';
import { actionParams, type Action, type ActionContext, type ActionOutcome } from './action.js';

/**
 * What a rule author writes to add an action: a name rules give in `actions: [{ action: NAME }]`,
 * a zod schema of its params, and `run`. It runs through the same path as the built-ins: the
 * instance's lock and re-check (unless `touchesInstance: false`), the one retry policy, the audit
 * log and dry-run.
 */
export interface ActionDefinition<S extends z.ZodType> {
  /** Lowercase letters, digits and dashes; must not be a built-in's name or another action's. */
  name: string;
  /** One line for `reflex rules list` and the docs. Default: the name. */
  describe?: string;
  /**
   * The params a rule may give, as a zod schema (`z.strictObject({...})`): rules are checked
   * against it when they load. A plain `z.object` is made strict (an unknown key such as a typo is
   * refused); use `z.looseObject` to accept extra keys.
   */
  params: S;
  /** Acts on the instance: runs under its lock, after the re-check. Default true. */
  touchesInstance?: boolean;
  /** Brings an instance back up (counts against the rule's crash-loop budget). Default false. */
  restarts?: boolean;
  /**
   * Does the work. Throw a `ReflexError` to choose the code and whether a retry helps; any other
   * error counts as ACTION_FAILED, not retried (so it is for the built-ins). In dry-run it is not called at all.
   */
  run(ctx: ActionContext<z.output<S>>): Promise<ActionOutcome> | ActionOutcome;
}

/** An action as `defineAction` returns it: what the loader collects from the rules folder. */
export interface DefinedAction<P = unknown> extends Action<P> {
  kind: 'action';
  /** Built in (src/actions) or defined in the rules folder. */
  builtin: boolean;
  /** Where `defineAction` was called (file and line, as the source map gives them), when known. */
  definedAt?: { file: string; line: number };
}

const actionName = /^[a-z0-9][a-z0-9-]*$/;

/** Whether a value is an action made with {@link defineAction}. */
export function isDefinedAction(v: unknown): v is DefinedAction {
  return (
    Boolean(v) &&
    typeof v === 'object' &&
    (v as DefinedAction).kind === 'action' &&
    typeof (v as DefinedAction).name === 'string' &&
    typeof (v as DefinedAction).run === 'function'
  );
}

/**
 * Defines an action for rules to name, next to the rules: export it from a file of the rules
 * folder (in the default export's array, or as a named export). Throws at import (a load error of
 * that file) when the definition is not valid.
 *
 * ```ts
 * export const drain = defineAction({
 *   name: 'drain-from-lb',
 *   params: z.strictObject({ pool: z.string() }),
 *   touchesInstance: false,
 *   async run(ctx) { … return { result: 'done', summary: `drained from ${ctx.params.pool}` }; },
 * });
 * ```
 */
export function defineAction<S extends z.ZodType>(def: ActionDefinition<S>): DefinedAction<z.output<S>> {
  // The stack from the caller of defineAction on, whatever this module's own frames map to.
  const trace: { stack?: string } = {};
  Error.captureStackTrace(trace, defineAction);
  return { ...makeAction(def, false), ...definedAt(trace.stack) };
}

/** The built-ins are made the same way as user actions, so both have one shape. */
export function builtinAction<S extends z.ZodType>(def: ActionDefinition<S> & { describe: string }): DefinedAction<z.output<S>> {
  return makeAction(def, true);
}

function makeAction<S extends z.ZodType>(def: ActionDefinition<S>, builtin: boolean): DefinedAction<z.output<S>> {
  const where = typeof def?.name === 'string' ? ` "${def.name}"` : '';
  if (!def || typeof def.name !== 'string' || !actionName.test(def.name))
    throw new Error(`invalid action${where}: name: use lowercase letters, digits and dashes`);
  if (!def.params || typeof (def.params as { safeParse?: unknown }).safeParse !== 'function')
    throw new Error(`invalid action${where}: params: a zod schema is needed (e.g. z.strictObject({ ... }), or z.strictObject({}) for none)`);
  if (typeof def.run !== 'function') throw new Error(`invalid action${where}: run: a function (ctx) => outcome is needed`);
  const run = def.run;
  return {
    kind: 'action',
    builtin,
    name: def.name,
    describe: def.describe ?? def.name,
    params: strict(def.params) as z.ZodType<z.output<S>>,
    ...(def.touchesInstance !== undefined ? { touchesInstance: def.touchesInstance } : {}),
    ...(def.restarts !== undefined ? { restarts: def.restarts } : {}),
    // An action's uncoded error is its code's fault, not a passing one: ACTION_FAILED, not retried
    // (the retry policy retries an uncoded error, as from Redis, only outside an action).
    run: async (ctx) => {
      try {
        return await run(ctx);
      } catch (err) {
        // A ReflexError (an ApiError of a client call included) keeps its code and retryability.
        if (err instanceof ReflexError) throw err;
        throw new ReflexError('ACTION_FAILED', `action ${def.name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },
  };
}

/**
 * A plain `z.object` made strict, so `{ nam: 'x' }` for `{ name }` is refused rather than ignored.
 * Read from zod 4's definition (`catchall` unset); a schema this does not recognise (another
 * version's copy bundled into the rule file) is kept as given.
 */
function strict(schema: z.ZodType): z.ZodType {
  const def = (schema as { _zod?: { def?: { type?: string; catchall?: unknown } } })._zod?.def;
  const s = schema as { strict?: () => z.ZodType };
  return def?.type === 'object' && def.catchall === undefined && typeof s.strict === 'function' ? s.strict() : schema;
}

/**
 * The file and line of the first frame of a stack: where defineAction was called (rule files are
 * compiled with inline source maps, and source maps are on while they load, so this is the .ts
 * file as written).
 */
function definedAt(stack: string | undefined): { definedAt?: { file: string; line: number } } {
  const first = stackPlaces(stack)[0];
  return first ? { definedAt: { file: first.file, line: first.line } } : {};
}

/**
 * Runs an action as the executor does: its params parsed by its schema first (CONFIG_INVALID
 * naming each field at fault otherwise; defaults applied), and a user-defined action in dry-run
 * not run at all (Reflex cannot know what its code would send): it says what it would run.
 */
export async function runAction(action: Action, ctx: ActionContext<unknown>): Promise<ActionOutcome> {
  const params = actionParams(action.name, action.params, ctx.params);
  // Params named like secrets (token, password…) are masked as the audit masks fields.
  if (ctx.dryRun && isDefinedAction(action) && !action.builtin)
    return { result: 'dry-run', summary: `would run ${action.name} with params ${JSON.stringify(redact(params))}` };
  return action.run({ ...ctx, params });
}
