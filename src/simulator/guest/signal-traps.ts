import type { Command, TransformPlugin } from 'just-bash';
import { parse } from 'just-bash';
import { harmlessSignals, signalNumbers } from './guest-commands.js';

/** The program the shell asks, after a `kill` or `killall`, for the trap actions of the signals it took meanwhile. */
const pendingProgram = '__signal_traps';

/** The programs after which the shell checks for signals it took (the only senders of one to the shell itself). */
const senders = new Set(['kill', 'killall']);

/**
 * Signals sent to the shell by its own commands, and the traps that catch them: busybox's sh runs
 * a signal's trap action between two commands, in the shell's own state (its variables and
 * functions; `exit` in the action ends the shell), with `$?` as it was, once however many times
 * the signal came. A trapped signal is taken ({@link deliver}) and its action run after the
 * statement whose `kill` or `killall` sent it: the shell's script is rewritten ({@link trapPoints})
 * so that each such statement is followed, in the same shell, by `eval` of what
 * {@link pendingCommand} prints.
 */
export class SignalTraps {
  private readonly pending = new Set<string>();

  /** @param traps The shell's traps by signal name (`USR1`), an empty action for an ignored signal. */
  constructor(private readonly traps: ReadonlyMap<string, string>) {}

  /**
   * A signal reaches the shell: true when the shell handles it (a trap, to run next, or ignored),
   * false when it ends the shell as its default action does; a signal whose default is to do nothing
   * (CHLD, CONT, WINCH …) never ends it.
   */
  deliver(signal: number): boolean {
    // A number may have two names (IOT and ABRT): the trap is under the one `trap` was given.
    const name = Object.keys(signalNumbers).find((n) => signalNumbers[n] === signal && this.traps.has(n));
    const action = name === undefined ? undefined : this.traps.get(name);
    if (action === undefined) return harmlessSignals.has(signal);
    if (action !== '') this.pending.add(name!);
    return true;
  }

  /**
   * The program that prints, for the shell to `eval`, the actions of the signals taken since it
   * last asked (in signal order), between `(exit S)`s that keep `$?` at the sender's status `S`.
   */
  pendingCommand(): Command {
    return {
      name: pendingProgram,
      execute: async (args) => {
        const status = /^\d+$/.test(args[0] ?? '') ? args[0]! : '0';
        const names = [...this.pending].sort((a, b) => signalNumbers[a]! - signalNumbers[b]!);
        this.pending.clear();
        const actions = names.map((n) => this.traps.get(n)).filter((a): a is string => !!a);
        // eval of nothing leaves $? 0: a sender's failure is given back by a subshell that exits so,
        // before `&&`, where a failure does not end a shell under `set -e`.
        const keep = status === '0' && actions.length === 0 ? '' : `(exit ${status}) && :\n`;
        return { stdout: actions.length ? keep + actions.map((a) => `${a}\n`).join('') + keep : keep, stderr: '', exitCode: 0 };
      },
    };
  }
}

type Node = { type?: string; [key: string]: unknown };

/** `kill …` or `killall …` named plainly (not through a variable or a quote-built word). */
function isSender(command: Node): boolean {
  if (command.type !== 'SimpleCommand') return false;
  const parts = (command.name as { parts?: Node[] } | null)?.parts;
  return parts?.length === 1 && parts[0]!.type === 'Literal' && senders.has(parts[0]!.value as string);
}

const isStatement = (node: unknown): boolean => (node as Node | null)?.type === 'Statement';

/**
 * Whether a sender runs as part of `node` itself: in its pipelines and the command substitutions
 * of its words, not in the statement lists of the compound commands it holds (which are checked on
 * their own). `deep` looks through those too (inside a command substitution).
 */
function senderIn(node: unknown, deep: boolean): boolean {
  if (Array.isArray(node)) return (deep || !node.some(isStatement)) && node.some((n) => senderIn(n, deep));
  if (node === null || typeof node !== 'object') return false;
  const n = node as Node;
  if (isSender(n)) return true;
  const deeper = deep || n.type === 'CommandSubstitution';
  return Object.values(n).some((v) => senderIn(v, deeper));
}

/**
 * The statement that runs the pending traps, `eval "$(__signal_traps $?)" && :`: a status it gives
 * back that is not 0 is before `&&`, so that `set -e` does not end the shell for it (the sender's
 * statement did not).
 */
const check = parse(`eval "$(${pendingProgram} $?)" && :`).statements[0]!;

/**
 * A sender followed by `&&` (`kill -USR1 $$ && echo ok`) has the check right after it, in the
 * list (`kill … && eval … && echo ok`): the trap runs before the next command, and the list goes
 * on as it did, the sender having succeeded.
 */
function checkedAfterAnd(statement: Node): Node {
  const pipelines = statement.pipelines as Node[];
  const operators = statement.operators as string[];
  const [newPipelines, newOperators] = [[pipelines[0]!], [] as string[]];
  for (let i = 0; i < operators.length; i++) {
    if (operators[i] === '&&' && senderIn(pipelines[i], false)) {
      newPipelines.push(structuredClone(check.pipelines[0]!) as unknown as Node);
      newOperators.push('&&');
    }
    newPipelines.push(pipelines[i + 1]!);
    newOperators.push(operators[i]!);
  }
  return { ...statement, pipelines: newPipelines, operators: newOperators };
}

/**
 * The transform that follows each statement holding a `kill` or `killall` (in a script, a function,
 * a loop, a branch, a group) with `eval "$(__signal_traps $?)"`, in the same statement list: the
 * traps run in the shell, after the statement (a command substitution's sender too, as busybox's
 * sh runs the trap once the command holding it is done), and `$?` is the statement's. The sender
 * itself is left as it is, so `set -e` and `||` treat it as they did.
 */
export const trapPoints: TransformPlugin = {
  name: 'signal-traps',
  transform({ ast }) {
    const walk = (node: unknown, inSubstitution: boolean): unknown => {
      if (Array.isArray(node)) {
        const out: unknown[] = [];
        for (const item of node) {
          out.push(walk(item, inSubstitution));
          if (!inSubstitution && isStatement(item) && senderIn(item, false)) out.push(structuredClone(check));
        }
        return out;
      }
      if (node === null || typeof node !== 'object') return node;
      const n = node as Node;
      const inside = inSubstitution || n.type === 'CommandSubstitution';
      const out = Object.fromEntries(Object.entries(n).map(([key, value]) => [key, walk(value, inside)])) as Node;
      return n.type === 'Statement' && !inside ? checkedAfterAnd(out) : out;
    };
    return { ast: walk(ast, false) as typeof ast };
  },
};
