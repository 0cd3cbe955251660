import type { Command } from 'just-bash';
import { harmlessSignals, signalNumbers } from './guest-commands.js';

/**
 * The program the patched shell asks, after each command it runs itself (not a subshell's, a
 * pipeline's command's or a command substitution's), for the trap actions of the signals it took
 * meanwhile (`patches/README.md`: `jbTrapPoint`).
 */
const pendingProgram = '__signal_traps';

/**
 * The shells of this process that have taken a trapped signal and not yet run its action. The
 * patched shell asks its {@link pendingProgram} only while this is not empty: asking is a program
 * run (the guest's wrappers write /proc/self for it), too dear after every command. It lives on
 * `globalThis` because the library cannot import this module. It holds weak references, dropped
 * once their shell is gone: a shell killed with a signal pending (`(kill -USR1 $$; kill -9 $$)`)
 * would otherwise keep every other shell asking.
 */
const pendingKey = Symbol.for('reflex.signalTrapsPending');
type Pending = Set<WeakRef<SignalTraps>>;
const withPending: Pending = ((globalThis as Record<symbol, unknown>)[pendingKey] ??= new Set()) as Pending;
const gone = new FinalizationRegistry<WeakRef<SignalTraps>>((ref) => withPending.delete(ref));

/**
 * Signals sent to the shell, and the traps that catch them: busybox's sh runs a signal's trap
 * action once the command that was running when it came has ended (ash's `dotrap` at the end of
 * each `evaltree`: after a command however it was invoked, `eval 'kill -USR1 $$'`, `command kill`,
 * `$k -USR1 $$`, a function's command; after the whole subshell, pipeline or command holding a
 * command substitution that sent it, since those are other processes), in the shell's own state
 * (its variables and functions; `exit` in the action ends the shell), with `$?` as it was, once
 * however many times the signal came. A trapped signal is taken ({@link deliver}) and its action
 * run by the patched shell, which asks {@link pendingCommand} after each of its own commands.
 */
export class SignalTraps {
  private readonly pending = new Set<string>();
  /** The signal that ends the shell at its next trap point ({@link endWith}). */
  private fatal: number | undefined;
  /** The signal the shell did not catch and dies of ({@link endWith}); undefined while none came. */
  get endedBy(): number | undefined {
    return this.fatal;
  }
  /** This shell as {@link withPending} holds it. */
  private readonly ref = new WeakRef(this);

  /** @param traps The shell's traps by signal name (`USR1`), an empty action for an ignored signal. */
  constructor(private readonly traps: ReadonlyMap<string, string>) {
    gone.register(this, this.ref);
  }

  /**
   * A signal reaches the shell: true when the shell handles it (a trap, to run next, or ignored),
   * false when it ends the shell as its default action does; a signal whose default is to do nothing
   * (CHLD, CONT, STOP, WINCH …) never ends it. KILL cannot be caught or ignored.
   */
  deliver(signal: number): boolean {
    if (signal === signalNumbers.KILL) return false;
    // A number may have two names (IOT and ABRT): the trap is under the one `trap` was given.
    const name = Object.keys(signalNumbers).find((n) => signalNumbers[n] === signal && this.traps.has(n));
    const action = name === undefined ? undefined : this.traps.get(name);
    if (action === undefined) return harmlessSignals.has(signal);
    if (action !== '') {
      this.pending.add(name!);
      withPending.add(this.ref);
    }
    return true;
  }

  /**
   * A signal the shell does not catch ends it at its next trap point, as if it ran `exit` with 128
   * + the signal, what it wrote before kept: for a shell started inside the command's
   * (nested-shell.ts), whose end is not the command's.
   */
  endWith(signal: number): void {
    this.fatal ??= signal;
    withPending.add(this.ref);
  }

  /**
   * The program that prints, for the shell to `eval`, the actions of the signals taken since it
   * last asked (in signal order), after an `(exit S)` that gives the actions `$?` as the command
   * left it (`S`, its first argument); the shell sets `$?` back to `S` after them.
   */
  pendingCommand(): Command {
    return {
      name: pendingProgram,
      execute: async (args) => {
        if (this.fatal !== undefined) {
          withPending.delete(this.ref);
          return { stdout: `exit ${128 + this.fatal}\n`, stderr: '', exitCode: 0 };
        }
        const status = /^\d+$/.test(args[0] ?? '') ? args[0]! : '0';
        const names = [...this.pending].sort((a, b) => signalNumbers[a]! - signalNumbers[b]!);
        this.pending.clear();
        withPending.delete(this.ref);
        const actions = names.map((n) => this.traps.get(n)).filter((a): a is string => !!a);
        // `&& :`: a status that is not 0 does not end the shell under `set -e`.
        const keep = status === '0' ? '' : `(exit ${status}) && :\n`;
        return { stdout: actions.length ? keep + actions.map((a) => `${a}\n`).join('') : '', stderr: '', exitCode: 0 };
      },
    };
  }
}
