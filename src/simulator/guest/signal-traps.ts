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
 * the signal came. A trapped signal is taken ({@link deliver}) and its action run after the `kill`
 * or `killall` that sent it: the shell's script is rewritten ({@link trapPoints}) so that each such
 * command is followed, in the same shell, by `eval` of what {@link pendingCommand} prints.
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
    const name = Object.keys(signalNumbers).find((n) => signalNumbers[n] === signal);
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
        const keep = `(exit ${status})\n`;
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

/**
 * The transform that makes each `kill` and `killall` of a script (at any depth: in functions,
 * loops, groups, command substitutions) `{ kill …; eval "$(__signal_traps $?)"; }`: the group runs
 * in the same shell, its redirections are the sender's own, and its status is the sender's.
 */
export const trapPoints: TransformPlugin = {
  name: 'signal-traps',
  transform({ ast }) {
    const check = parse(`eval "$(${pendingProgram} $?)"`).statements[0]!;
    const walk = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(walk);
      if (node === null || typeof node !== 'object') return node;
      const n = node as Node;
      const out: Node = {};
      for (const [key, value] of Object.entries(n)) out[key] = walk(value);
      if (n.type === 'Pipeline' && Array.isArray(out.commands))
        out.commands = out.commands.map((c: Node) =>
          isSender(c)
            ? {
                type: 'Group',
                body: [
                  { type: 'Statement', pipelines: [{ type: 'Pipeline', commands: [c], negated: false }], operators: [], background: false },
                  structuredClone(check),
                ],
                redirections: [],
              }
            : c,
        );
      return out;
    };
    return { ast: walk(ast) as typeof ast };
  },
};
