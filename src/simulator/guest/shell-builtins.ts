import { AsyncLocalStorage } from 'node:async_hooks';
import { testSyntaxCommand } from './busybox-test.js';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { directoryStdinCommand } from './directory-stdin.js';
import { groupStdinCommand, terminalStdinCommand } from './terminal-stdin.js';
import { fullStdoutCommand } from './stdout-full.js';
import { jobDeath, lineOf, signalNumbers } from './guest-commands.js';
import { defaultUmask } from './guest-fs.js';
import { NamedPipes } from './guest-pipes.js';
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
  /** The umask of the process running now, as `umask` last set it (022 to begin with): what its files are made with. */
  umask(): number;
  /** The signals the shell's own commands send it, run by its traps ({@link SignalTraps}). */
  signals: SignalTraps;
  /**
   * Runs the exec's shell: what it starts (jobs, shells) is told apart from it by the process each
   * runs in ({@link spawn}, the patched shell's fork of a job).
   */
  run<T>(shell: () => Promise<T>): Promise<T>;
  /** Aborted (reason: the signal) once the process running now is killed: a job `kill` ended. */
  killed(): AbortSignal;
  /** What else ends a wait of this exec's processes (a named pipe's open): the exec killed, a Ctrl-C. */
  endWaitsWith(end: () => AbortSignal): void;
  /**
   * A shell process starts inside this one (`sh -c`, `sh FILE`, a script run by its path): what
   * runs through its {@link SpawnedShell.run} has its own state, as a forked and exec'd shell has:
   * the umask it inherits, no traps, its own signals and EXIT trap.
   */
  spawn(): SpawnedShell;
  /**
   * A signal for `pid` (`kill`): true when it is a background job the shell started (`cmd &`, `$!`)
   * and has not reaped. A running job takes it as its traps say or dies of it; one that ran to its
   * end is a zombie, which a signal reaches without effect, until the shell reaps it ({@link reap}).
   */
  signalJob(pid: number, signal: number): boolean;
  /** The jobs still running, each with the program it runs now (none between its programs): what `ps` lists. */
  runningJobs(): { pid: number; program: readonly string[] | undefined }[];
  /** A program starts (`argv`) or ends (none) in the process running now: a job shows it in `ps`. */
  runs(argv: readonly string[] | undefined): void;
  /** The command has ended: a job left running is init's orphan, which reaps it as it ends. */
  orphan(): void;
  /**
   * A program the shell waited for has ended: ash's wait for it reaps every job that has ended by
   * then (a signal to one is `No such process` after), as `wait` does.
   */
  reap(): void;
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
  /** Runs it: the builtins its commands call keep its state. */
  run<T>(shell: () => Promise<T>): Promise<T>;
}

/**
 * A job of ash's job table: its pid; how it ended (its status, or the signal that killed it); whether
 * the shell has reaped it (a signal no longer reaches it) and waited for it (its slot is free again).
 */
interface Job {
  pid: number;
  done: boolean;
  status?: number;
  signal?: number;
  reaped: boolean;
  waited: boolean;
}

/**
 * One shell process's state, as a fork copies it: its umask, its traps (and those of the subshell
 * it runs now), the subshells it is inside, its job table, and its end when a signal kills it.
 */
interface ProcessState {
  mask: number;
  traps: Map<string, string>;
  current: Map<string, string>;
  signals: SignalTraps;
  saved: { mask: number; traps: Map<string, string> }[];
  table: Map<number, Job>;
  killed: AbortController;
  /** The program it runs now, if any. */
  program?: readonly string[];
  /** The shell started inside it that runs now (`sh -c … &`: what ash's job execs), if any. */
  shell?: ProcessState;
}

/**
 * The process each of the guest's shells runs its commands in. A job runs beside the shell that
 * started it (the patched shell forks it, `reflex.fork`), so the state a builtin reads is the one
 * of the process whose command called it, wherever the two interleave.
 */
const running = new AsyncLocalStorage<{ owner: object; state: ProcessState }>();

/** What else ends a wait of each exec's processes ({@link ShellBuiltins.endWaitsWith}), by the exec's owner. */
const waitEnds = new WeakMap<object, () => AbortSignal>();

// A wait at a named pipe ends when the process waiting is killed, or its exec is.
NamedPipes.waitEnd = () => {
  const store = running.getStore();
  if (!store) return undefined;
  const also = waitEnds.get(store.owner)?.();
  return also ? AbortSignal.any([store.state.killed.signal, also]) : store.state.killed.signal;
};

/**
 * A signal for the shell the process running now runs (`timeout 1 sh -c 'trap … TERM; …'`, which
 * on the beds signals that shell): true when the shell's trap takes it (run after the command it
 * came during); false when there is no such shell, or it does not trap the signal.
 */
export function trappedByShellRunning(signal: number): boolean {
  return running.getStore()?.state.shell?.signals.deliver(signal) ?? false;
}

/** A process that starts with `parent`'s umask, and its traps reset but for the ignored ones, as ash's fork does. */
function forked(parent: ProcessState): ProcessState {
  const traps = new Map([...parent.current].filter(([, action]) => action === ''));
  return { mask: parent.mask, traps, current: traps, signals: new SignalTraps(traps), saved: [], table: new Map(), killed: new AbortController() };
}

/**
 * The patched shell forks a job (`cmd &`) through this: `run` is its subshell, run in a process of
 * its own (the one of the exec it belongs to, found by where the shell runs), whose end it answers
 * with how it died. A shell outside any exec runs it as it is.
 */
type Fork = (pid: number, run: () => Promise<ExecResult>) => Promise<ExecResult & { jbSaid?: string }>;
const forkKey = Symbol.for('reflex.fork');
const forks = new WeakMap<object, Fork>();
(globalThis as Record<symbol, unknown>)[forkKey] = ((pid, run) => {
  const here = running.getStore();
  const fork = here && forks.get(here.owner);
  return fork ? fork(pid, run) : run();
}) satisfies Fork;

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
  // The exec's shell: its own traps, which the signals sent to it ($$) run, and those of the
  // subshell that runs now (the shell's own outside any). Each shell and job it starts has its own.
  const topTraps = new Map<string, string>();
  const top: ProcessState = {
    mask: defaultUmask,
    traps: topTraps,
    current: topTraps,
    signals: new SignalTraps(topTraps),
    saved: [],
    table: new Map(),
    killed: new AbortController(),
  };
  const owner = {};
  /** The process whose command runs now. */
  const here = (): ProcessState => {
    const store = running.getStore();
    return store?.owner === owner ? store.state : top;
  };
  const within = <T>(state: ProcessState, shell: () => Promise<T>): Promise<T> => running.run({ owner, state }, shell);
  const limitValues = new Map(limits.map((l) => [l.flag, l.value]));

  const umask: Command = {
    name: 'umask',
    async execute(args, ctx) {
      const symbolic = args[0] === '-S';
      const rest = symbolic ? args.slice(1) : args;
      const p = here();
      if (rest.length === 0) return ok(symbolic ? `${symbolicMask(p.mask)}\n` : `${p.mask.toString(8).padStart(4, '0')}\n`);
      const parsed = parseMask(rest[0]!, p.mask);
      if (parsed === undefined) return { stdout: '', stderr: `bash: umask: line ${lineOf(ctx)}: illegal mode: ${rest[0]}\n`, exitCode: 2 };
      p.mask = parsed;
      return ok();
    },
  };

  const trap: Command = {
    name: 'trap',
    async execute(args, ctx) {
      const { current } = here();
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
  //
  // ash's job table (without job control): a job keeps its number, and `%N` finds it, until a new
  // job takes the slot, which makejob does once the job is done and waited for (by `wait` alone
  // too). In the order started.
  const jobPid = (spec: string): number | undefined => {
    const { table } = here();
    const order = [...table.values()];
    if (spec === '%' || spec === '%%' || spec === '%+') return order.at(-1)?.pid;
    if (spec === '%-') return order.at(-2)?.pid;
    return /^%[0-9]+$/.test(spec) ? table.get(Number(spec.slice(1)))?.pid : undefined;
  };
  const subshell: Command = {
    name: '__reflex_subshell',
    async execute(args) {
      const p = here();
      if (args[0] === 'enter') {
        p.saved.push({ mask: p.mask, traps: p.current });
        p.current = new Map([...p.current].filter(([, action]) => action === ''));
      } else if (args[0] === 'exit') {
        const action = p.current.get('EXIT');
        p.current.delete('EXIT');
        return ok(action ?? '');
      } else if (args[0] === 'reaped') {
        // `wait PID` reaps the job (its status stays for another wait); `wait` alone all of them.
        for (const job of p.table.values()) if (args[1] === undefined || job.pid === Number(args[1])) job.waited = job.reaped = true;
      } else if (args[0] === 'spec') {
        // The patched `wait` asks which pid a job spec names.
        const pid = jobPid(args[1] ?? '');
        return ok(pid === undefined ? '' : String(pid));
      } else if (args[0] === 'leave') {
        const parent = p.saved.pop();
        if (parent) ({ mask: p.mask, traps: p.current } = parent);
      }
      return ok();
    },
  };

  // The jobs of every shell of the command, by pid: what `kill` reaches.
  const jobs = new Map<number, { job: Job; state: ProcessState }>();
  let orphaned = false;
  /**
   * A job (`cmd &`) the patched shell forks: it takes a free slot of the table of the shell that
   * starts it and runs in a process of its own beside that shell; killed by a signal its traps do
   * not take, it ends with 128 + the signal, and `wait` says how it died (`Terminated`).
   */
  const fork: Fork = async (pid, run) => {
    const parent = here();
    let n = 1;
    while (parent.table.has(n) && !(parent.table.get(n)!.done && parent.table.get(n)!.waited)) n++;
    parent.table.delete(n);
    const job: Job = { pid, done: false, reaped: false, waited: false };
    parent.table.set(n, job);
    const state = forked(parent);
    jobs.set(pid, { job, state });
    const result = await within(state, run).finally(() => {
      job.done = true;
      job.reaped ||= orphaned;
    });
    job.signal = state.signals.endedBy;
    if (job.signal === undefined) {
      job.status = result.exitCode;
      return result;
    }
    return { ...result, exitCode: 128 + job.signal, jbSaid: jobDeath(job.signal) };
  };
  forks.set(owner, fork);
  const signalJob = (pid: number, signal: number): boolean => {
    const found = jobs.get(pid);
    if (!found || found.job.reaped) return false;
    if (found.job.done || signal === 0) return true;
    // A job that runs a shell (`sh -c '…' &`) is that shell on the beds (ash execs it): a signal its traps take runs them.
    if (found.state.shell?.signals.deliver(signal)) return true;
    if (!found.state.signals.deliver(signal)) {
      // It dies, and so does the shell it runs (what runs it now wakes: its `sleep`, a wait at a named pipe).
      for (let p: ProcessState | undefined = found.state; p; p = p.shell) {
        p.signals.endWith(signal);
        p.killed.abort(signal);
      }
    }
    return true;
  };

  // A shell process started inside: its own traps and signals; its umask the parent's to begin with, its own after.
  const spawn = (): SpawnedShell => {
    const parent = here();
    const traps = new Map<string, string>();
    const state: ProcessState = { ...forked(parent), traps, current: traps, signals: new SignalTraps(traps) };
    return {
      signals: state.signals,
      exitTrap: () => state.traps.get('EXIT') || undefined,
      run: (shell) => {
        const outer = parent.shell;
        parent.shell = state;
        return within(state, shell).finally(() => (parent.shell = outer));
      },
    };
  };
  // The patched shell asks the traps of the shell process it runs in.
  const pending: Command = {
    name: top.signals.pendingCommand().name,
    execute: (args, ctx) => here().signals.pendingCommand().execute(args, ctx),
  };

  // ash's ERR trap (bash's, which busybox's ash keeps): the patched shell asks for its action after a
  // command of the script's own list (not one inside a function, a group or a condition) ends with a
  // status that is not 0; a subshell has none (its traps are reset).
  const errTrap: Command = { name: '__reflex_err_trap', execute: async () => ok(here().current.get('ERR') ?? '') };

  // ash's `jobs` without job control: the jobs its operands name (job specs), else the whole
  // table, the last started first, `+` the current job and `-` the one before, each `Running`,
  // `Done`, `Done(N)` or how it died, at column 33 (no command text: ash keeps none then); `-p`
  // lists their pids, `-l` puts the pid before the state. A done job listed is gone from the table.
  const jobsCommand: Command = {
    name: 'jobs',
    execute: async (args, ctx) => {
      const { table } = here();
      let mode = '';
      let i = 0;
      for (; i < args.length && /^-./.test(args[i]!) && args[i] !== '--'; i++) {
        const bad = args[i]!.slice(1).replace(/[lp]/g, '');
        if (bad) return { stdout: '', stderr: `sh: jobs: line ${lineOf(ctx)}: illegal option -${bad[0]}\n`, exitCode: 2 };
        mode += args[i]!.slice(1);
      }
      const order = [...table].reverse();
      // The current job (`+`) and the one before (`-`) as the table is when the job is listed: a done job listed before is gone.
      const mark = (n: number): string => {
        const [current, previous] = [...table.keys()].reverse();
        return n === current ? '+' : n === previous ? '-' : ' ';
      };
      let listed = order;
      let stderr = '';
      const specs = args.slice(args[i] === '--' ? i + 1 : i);
      if (specs.length) {
        listed = [];
        for (const spec of specs) {
          const pid = jobPid(spec);
          const hit = order.find(([, job]) => job.pid === pid);
          if (hit) listed.push(hit);
          else stderr += `sh: jobs: line ${lineOf(ctx)}: ${spec}: no such job\n`;
        }
      }
      const line = ([n, job]: [number, Job]): string => {
        if (mode.includes('p')) return `${job.pid}\n`;
        const head = `[${n}]${mark(n)}  ${mode.includes('l') ? `${job.pid} ` : ''}`;
        const state = !job.done
          ? 'Running'
          : job.signal !== undefined
            ? jobDeath(job.signal).trim() || 'Done'
            : job.status
              ? `Done(${job.status})`
              : 'Done';
        return `${head}${state.padEnd(33 - head.length)}\n`;
      };
      let stdout = '';
      for (const listedJob of listed) {
        stdout += line(listedJob);
        if (listedJob[1].done) table.delete(listedJob[0]);
      }
      return { stdout, stderr, exitCode: stderr ? 2 : 0 };
    },
  };
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
      groupStdinCommand(),
      fullStdoutCommand(),
      pending,
      errTrap,
    ],
    exitTrap: () => top.traps.get('EXIT') || undefined,
    umask: () => here().mask,
    signalJob,
    runningJobs: () => [...jobs].filter(([, { job }]) => !job.done).map(([pid, { state }]) => ({ pid, program: state.program })),
    runs: (argv) => {
      const p = here();
      if (p !== top) p.program = argv;
    },
    orphan: () => {
      orphaned = true;
      for (const { job } of jobs.values()) if (job.done) job.reaped = true;
    },
    reap: () => {
      for (const { job } of jobs.values()) if (job.done) job.reaped = true;
    },
    jobPid: (spec) => jobPid(spec),
    signals: top.signals,
    run: (shell) => within(top, shell),
    killed: () => here().killed.signal,
    endWaitsWith: (end) => void waitEnds.set(owner, end),
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
