import { testSyntaxCommand } from './busybox-test.js';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { directoryStdinCommand } from './directory-stdin.js';
import { terminalStdinCommand } from './terminal-stdin.js';
import { lineOf, signalNumbers } from './guest-commands.js';
import { defaultUmask } from './guest-fs.js';
import { SignalTraps } from './signal-traps.js';
import { appletNames } from './busybox-applets.js';

const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0 });

// The shell's own messages start `bash: `, as just-bash's do: the shell names them after itself
// (`sh:`, `/bin/sh:`, a script's name) where it gives them out. ulimit's number is busybox's applet
// code (`sh: invalid number`, whatever the script).

/**
 * What busybox ash prints for the limits `ulimit -a` lists (its order and wording), with the test
 * beds' values: a container's limits are its host's, these are the LXD test bed's.
 */
const limits: { flag: string; label: string; value: string }[] = [
  { flag: 'c', label: 'core file size (blocks)', value: '0' },
  { flag: 'd', label: 'data seg size (kb)', value: 'unlimited' },
  { flag: 'e', label: 'scheduling priority', value: '0' },
  { flag: 'f', label: 'file size (blocks)', value: 'unlimited' },
  { flag: 'i', label: 'pending signals', value: '96363' },
  { flag: 'l', label: 'max locked memory (kb)', value: '8192' },
  { flag: 'm', label: 'max memory size (kb)', value: 'unlimited' },
  { flag: 'n', label: 'open files', value: '20000' },
  { flag: 'q', label: 'POSIX message queues (bytes)', value: '819200' },
  { flag: 'r', label: 'real-time priority', value: '0' },
  { flag: 's', label: 'stack size (kb)', value: '8192' },
  { flag: 't', label: 'cpu time (seconds)', value: 'unlimited' },
  { flag: 'u', label: 'max user processes', value: '96363' },
  { flag: 'v', label: 'virtual memory (kb)', value: 'unlimited' },
  { flag: 'x', label: 'file locks', value: 'unlimited' },
];

/** The shell state the builtins below keep for one command (one `sh -c`), as a shell process would. */
export interface ShellBuiltins {
  /**
   * `umask`, `trap`, `ulimit`, `jobs` and `times`, which just-bash names as builtins but does not
   * run, and the answers the patched shell asks for a program that read a directory as its stdin.
   */
  commands: Command[];
  /** The `trap … EXIT` (or `0`) handler set when the script ended, if any. */
  exitTrap(): string | undefined;
  /** The umask as `umask` last set it (022 to begin with): what the command's files are made with. */
  umask(): number;
  /** The signals the shell's own commands send it, run by its traps ({@link SignalTraps}). */
  signals: SignalTraps;
  /**
   * A shell process starts inside this one (`sh -c`, `sh FILE`, a script run by its path): until
   * it leaves, the builtins keep its own state, as a forked and exec'd shell has: the umask it
   * inherits, no traps, its own signals and EXIT trap.
   */
  spawn(): SpawnedShell;
  /**
   * Whether `pid` is a background job the shell started (`cmd &`, `$!`) and has not waited for: it
   * ran to its end, a zombie, which a signal reaches without effect (`kill $!` succeeds; after `wait`, no such process).
   */
  isJob(pid: number): boolean;
  /**
   * The pid of the job a job spec names, as ash without job control reads it: `%N` job N, `%%`,
   * `%+` and `%` the last started, `%-` the one before; undefined for no such job. ash keeps no
   * command text then, so `%name` and `%?text` name none.
   */
  jobPid(spec: string): number | undefined;
}

/** The state of a shell process started inside the command's shell ({@link ShellBuiltins.spawn}). */
export interface SpawnedShell {
  /** The signals sent to it, run by its own traps. */
  signals: SignalTraps;
  /** Its `trap … EXIT` as it ends, if any. */
  exitTrap(): string | undefined;
  /** It has ended: the builtins keep the state of the shell that started it again. */
  leave(): void;
}

/**
 * busybox ash's `umask`, `trap`, `ulimit`, `jobs` and `times` over the state of one command: what
 * scripts and tools rely on (Ansible starts every module with `umask 77 && mkdir …`) answers as on
 * the test beds' busybox (observed: `umask` prints `0022`, `-S` `u=rwx,g=rx,o=rx`, a bad mode is
 * `sh: umask: line N: illegal mode: X` with 2, N the line it is on; `trap` with no argument lists `trap -- 'cmd' SIG`;
 * `ulimit` prints `unlimited`; `times` four zero times; `jobs` nothing). The umask is kept for the
 * guest's filesystem and programs to make files with ({@link ShellBuiltins.umask}). An EXIT trap runs when the
 * script ends (the caller runs {@link ShellBuiltins.exitTrap}); another signal's trap runs when the
 * shell's own `kill` or `killall` sends it that signal ({@link ShellBuiltins.signals}).
 */
export function shellBuiltins(history: () => readonly string[] = () => []): ShellBuiltins {
  let mask = defaultUmask;
  // The shell's own traps, which the signals sent to it ($$) run, and those of the subshell that
  // runs now (the shell's own outside any).
  let traps = new Map<string, string>();
  let current = traps;
  let signals = new SignalTraps(traps);
  const topSignals = signals;
  const limitValues = new Map(limits.map((l) => [l.flag, l.value]));

  const umask: Command = {
    name: 'umask',
    async execute(args, ctx) {
      const symbolic = args[0] === '-S';
      const rest = symbolic ? args.slice(1) : args;
      if (rest.length === 0) return ok(symbolic ? `${symbolicMask(mask)}\n` : `${mask.toString(8).padStart(4, '0')}\n`);
      const parsed = parseMask(rest[0]!, mask);
      if (parsed === undefined) return { stdout: '', stderr: `bash: umask: line ${lineOf(ctx)}: illegal mode: ${rest[0]}\n`, exitCode: 2 };
      mask = parsed;
      return ok();
    },
  };

  const trap: Command = {
    name: 'trap',
    async execute(args, ctx) {
      if (args.length === 0 || (args.length === 1 && args[0] === '-p'))
        return ok(
          [...current.entries()]
            .sort(([a], [b]) => signalOrder(a) - signalOrder(b))
            .map(([signal, action]) => `trap -- '${action.replace(/'/g, `'\\''`)}' ${signal}\n`)
            .join(''),
        );
      const [action, ...signals] = args[0] === '--' ? args.slice(1) : args;
      // `trap SIG` alone (a signal, not a command) resets it, as `trap - SIG` does.
      const reset = action === '-' || (signals.length === 0 && signalName(action!) !== undefined);
      const names = signals.length === 0 && reset && action !== '-' ? [action!] : signals;
      for (const given of names) {
        const name = signalName(given);
        if (name === undefined)
          return { stdout: '', stderr: `bash: trap: line ${lineOf(ctx)}: ${given}: invalid signal specification\n`, exitCode: 1 };
        if (reset) current.delete(name);
        else current.set(name, action!);
      }
      return ok();
    },
  };

  const ulimit: Command = {
    name: 'ulimit',
    async execute(args) {
      if (args.includes('-a')) return ok(limits.map((l) => `${l.label.padEnd(32)}(-${l.flag}) ${limitValues.get(l.flag)}\n`).join(''));
      let flag = 'f';
      let value: string | undefined;
      for (const a of args) {
        if (/^-[HS]+$/.test(a)) continue;
        const m = /^-[HS]*([a-z])$/.exec(a);
        if (m && limitValues.has(m[1]!)) flag = m[1]!;
        else if (!a.startsWith('-')) value = a;
        else return { stdout: '', stderr: `ulimit: invalid option -- '${a.replace(/^-[HS]*/, '').charAt(0)}'\n`, exitCode: 1 };
      }
      if (value === undefined) return ok(`${limitValues.get(flag)}\n`);
      if (value !== 'unlimited' && !/^\d+$/.test(value)) return { stdout: '', stderr: `sh: invalid number '${value}'\n`, exitCode: 1 };
      limitValues.set(flag, value);
      return ok();
    },
  };

  // A subshell is a forked process in ash: its umask and traps are its own, and its EXIT trap runs
  // as it ends. The patched shell asks here as a subshell starts (`enter`), for the EXIT trap to run
  // as it ends (`exit`), and once it has ended (`leave`). The child starts with the parent's umask
  // and with its traps reset, but for the ignored ones (`trap '' SIG`), as ash's fork does; a
  // signal sent to $$ still reaches the shell's own traps.
  const saved: { mask: number; traps: Map<string, string> }[] = [];
  // ash's job table (without job control): a job keeps its number, and `%N` finds it, until a new
  // job takes the slot, which makejob does once the job is done and waited for (by `wait` alone
  // too). The simulator's jobs are done as soon as started. In the order started.
  const table = new Map<number, { pid: number; waited: boolean }>();
  const jobPid = (spec: string): number | undefined => {
    const order = [...table.values()];
    if (spec === '%' || spec === '%%' || spec === '%+') return order.at(-1)?.pid;
    if (spec === '%-') return order.at(-2)?.pid;
    return /^%[0-9]+$/.test(spec) ? table.get(Number(spec.slice(1)))?.pid : undefined;
  };
  const subshell: Command = {
    name: '__reflex_subshell',
    async execute(args) {
      if (args[0] === 'enter') {
        saved.push({ mask, traps: current });
        current = new Map([...current].filter(([, action]) => action === ''));
      } else if (args[0] === 'exit') {
        const action = current.get('EXIT');
        current.delete('EXIT');
        return ok(action ?? '');
      } else if (args[0] === 'job') {
        let n = 1;
        while (table.has(n) && !table.get(n)!.waited) n++;
        table.delete(n);
        table.set(n, { pid: Number(args[1]), waited: false });
      } else if (args[0] === 'reaped') {
        // `wait PID` reaps the job (its status stays for another wait); `wait` alone all of them.
        for (const job of table.values()) if (args[1] === undefined || job.pid === Number(args[1])) job.waited = true;
      } else if (args[0] === 'spec') {
        // The patched `wait` asks which pid a job spec names.
        const pid = jobPid(args[1] ?? '');
        return ok(pid === undefined ? '' : String(pid));
      } else if (args[0] === 'leave') {
        const parent = saved.pop();
        if (parent) ({ mask, traps: current } = parent);
      }
      return ok();
    },
  };

  // A shell process started inside: its own traps and signals; its umask the parent's to begin with,
  // its own after. The subshells it enters are its own: what it left entered when it ends (killed) is dropped.
  const spawn = (): SpawnedShell => {
    const parent = { mask, traps, current, signals, depth: saved.length };
    traps = new Map();
    current = traps;
    signals = new SignalTraps(traps);
    const own = { traps, signals };
    return {
      signals: own.signals,
      exitTrap: () => own.traps.get('EXIT') || undefined,
      leave: () => {
        saved.length = parent.depth;
        ({ mask, traps, current, signals } = parent);
      },
    };
  };
  // The patched shell asks the traps of the shell process it runs in.
  const pending: Command = { name: signals.pendingCommand().name, execute: (args, ctx) => signals.pendingCommand().execute(args, ctx) };

  // ash's ERR trap (bash's, which busybox's ash keeps): the patched shell asks for its action after a
  // command of the script's own list (not one inside a function, a group or a condition) ends with a
  // status that is not 0; a subshell has none (its traps are reset).
  const errTrap: Command = { name: '__reflex_err_trap', execute: async () => ok(current.get('ERR') ?? '') };

  const jobsCommand: Command = { name: 'jobs', execute: async () => ok() };
  const times: Command = { name: 'times', execute: async () => ok('0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n') };
  // busybox's `show_history`: the terminal's lines, numbered from 0 (a shell without a terminal has none); its operands are ignored.
  const historyCommand: Command = {
    name: 'history',
    execute: async () =>
      ok(
        history()
          .map((line, i) => `${String(i).padStart(4)} ${line}\n`)
          .join(''),
      ),
  };

  return {
    commands: [
      umask,
      trap,
      ulimit,
      jobsCommand,
      times,
      historyCommand,
      helpCommand,
      subshell,
      testSyntaxCommand,
      directoryStdinCommand(),
      terminalStdinCommand(),
      pending,
      errTrap,
    ],
    exitTrap: () => traps.get('EXIT') || undefined,
    umask: () => mask,
    // A job not yet waited for: it ran to its end, a zombie until `wait`.
    isJob: (pid) => [...table.values()].some((job) => job.pid === pid && !job.waited),
    jobPid: (spec) => jobPid(spec),
    signals: topSignals,
    spawn,
  };
}

/** `HUP`, `SIGHUP`, `1` → `HUP`; `0` and `EXIT` → `EXIT`; undefined for no signal. */
function signalName(given: string): string | undefined {
  const upper = given.toUpperCase().replace(/^SIG/, '');
  if (upper === 'EXIT' || upper === '0') return 'EXIT';
  if (upper === 'ERR') return 'ERR';
  if (/^\d+$/.test(upper)) return Object.entries(signalNumbers).find(([, n]) => n === Number(upper))?.[0];
  return upper in signalNumbers ? upper : undefined;
}

function signalOrder(name: string): number {
  return name === 'EXIT' ? 0 : name === 'ERR' ? 65 : (signalNumbers[name] ?? 99);
}

/** An octal mode (up to 0777) or a symbolic one (`u=rwx,g=rx,o=`), as the new mask; undefined when neither. */
function parseMask(text: string, current: number): number | undefined {
  if (/^[0-7]{1,4}$/.test(text)) {
    const n = Number.parseInt(text, 8);
    return n <= 0o777 ? n : undefined;
  }
  let allowed = 0o777 & ~current;
  for (const clause of text.split(',')) {
    const m = /^([ugoa]*)([=+-])([rwx]*)$/.exec(clause);
    if (!m) return undefined;
    const who = m[1] === '' || m[1]!.includes('a') ? 'ugo' : m[1]!;
    const bits = (m[3]!.includes('r') ? 4 : 0) | (m[3]!.includes('w') ? 2 : 0) | (m[3]!.includes('x') ? 1 : 0);
    for (const [w, shift] of [
      ['u', 6],
      ['g', 3],
      ['o', 0],
    ] as const) {
      if (!who.includes(w)) continue;
      if (m[2] === '=') allowed = (allowed & ~(7 << shift)) | (bits << shift);
      else if (m[2] === '+') allowed |= bits << shift;
      else allowed &= ~(bits << shift);
    }
  }
  return 0o777 & ~allowed;
}

/** `u=rwx,g=rx,o=rx` for 0022, as `umask -S` prints it. */
function symbolicMask(mask: number): string {
  const allowed = 0o777 & ~mask;
  const part = (shift: number): string => {
    const b = (allowed >> shift) & 7;
    return `${b & 4 ? 'r' : ''}${b & 2 ? 'w' : ''}${b & 1 ? 'x' : ''}`;
  };
  return `u=${part(6)},g=${part(3)},o=${part(0)}`;
}

/** ash's builtins, in the order its `help` lists them (busybox 1.35 on the beds). */
const ashBuiltins =
  '. : [ [[ alias bg break cd chdir command continue echo eval exec exit export false fg getopts hash help history jobs kill let local printf pwd read readonly return set shift source test times trap true type ulimit umask unalias unset wait';

/**
 * ash's `help` (the patched shell's `help` builtin runs it: patches/README.md 51): its builtins, then
 * busybox's applets, each after a tab or a blank, a new line once a line passes 60 columns, and a
 * blank line at the end. Its operands are ignored.
 */
const helpCommand: Command = {
  name: '__reflex_help',
  async execute() {
    let text = 'Built-in commands:\n------------------\n';
    let col = 0;
    for (const name of [...ashBuiltins.split(' '), ...appletNames]) {
      text += `${col === 0 ? '\t' : ' '}${name}`;
      col += name.length + 1;
      if (col > 60) {
        text += '\n';
        col = 0;
      }
    }
    return { stdout: `${text}${col > 0 ? '\n' : ''}\n`, stderr: '', exitCode: 0 };
  },
};
