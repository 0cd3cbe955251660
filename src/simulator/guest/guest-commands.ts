import { machine, release, version } from 'node:os';
import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';
import { banner, getopt, helpAsked, isResult } from './busybox-getopt.js';
import { symlinkLoop } from './file-status.js';
import { openRefusal } from './guest-access.js';
import { rewordStderr } from './program-output.js';
import type { CommandOutcome } from './scripted-commands.js';

/** What the guest's own programs need to know about the process running them. */
export interface GuestProcess {
  /** The instance's node name (what `hostname` and `uname -n` print): its name, unless a command of this run set another. */
  hostname: () => string;
  /** Sets the node name until the instance stops (`hostname NAME`). */
  setHostname: (name: string) => void;
  uid: number;
  gid: number;
  /** `$$` of the top shell. */
  pid: number;
  /** Ends the whole command with a signal (a `kill` of the shell itself). */
  killSelf: (signal: number) => void;
  /** Sends the instance's init a signal: if it exits on it, the instance stops once the command has ended. */
  signalInit: (signal: number) => void;
  /** Sends a shell started inside the top one a signal (signal 0: asks only); false when no such shell runs. */
  signalShell: (pid: number, signal: number) => boolean;
  /** The pid of the job a job spec (`%1`, `%%`) names; undefined for no such job. */
  jobPid: (spec: string) => number | undefined;
}

/** The line a builtin runs on as busybox's sh counts it (from 0 in `sh -c`), which the patched shell gives its commands (ash's `line N` in a builtin's error). */
export const lineOf = (ctx: CommandContext): number => (ctx as CommandContext & { jbLine?: number }).jbLine ?? 0;

/** SIGINT's number: what Ctrl-C on a terminal sends; a program it interrupts dies of it (status 130). */
export const sigint = 2;

/** Signal numbers by name, as Linux numbers them on x86_64. */
export const signalNumbers: Record<string, number> = {
  HUP: 1,
  INT: 2,
  QUIT: 3,
  ILL: 4,
  TRAP: 5,
  ABRT: 6,
  BUS: 7,
  FPE: 8,
  KILL: 9,
  USR1: 10,
  SEGV: 11,
  USR2: 12,
  PIPE: 13,
  ALRM: 14,
  TERM: 15,
  STKFLT: 16,
  CHLD: 17,
  CONT: 18,
  STOP: 19,
  TSTP: 20,
  TTIN: 21,
  TTOU: 22,
  URG: 23,
  XCPU: 24,
  XFSZ: 25,
  VTALRM: 26,
  PROF: 27,
  WINCH: 28,
  IO: 29,
  PWR: 30,
  SYS: 31,
};

/** strsignal(3) as musl and glibc word it, which ash prints for a job a signal ended. */
const signalDescriptions: Record<number, string> = {
  1: 'Hangup',
  3: 'Quit',
  4: 'Illegal instruction',
  5: 'Trace/breakpoint trap',
  6: 'Aborted',
  7: 'Bus error',
  8: 'Floating point exception',
  9: 'Killed',
  10: 'User defined signal 1',
  11: 'Segmentation fault',
  12: 'User defined signal 2',
  14: 'Alarm clock',
  15: 'Terminated',
  16: 'Stack fault',
  24: 'CPU time limit exceeded',
  25: 'File size limit exceeded',
  26: 'Virtual timer expired',
  27: 'Profiling timer expired',
  29: 'I/O possible',
  30: 'Power failure',
  31: 'Bad system call',
};

/** What ash prints for a foreground job a signal ended (`sprint_status`): strsignal's words, nothing for INT and PIPE. */
export function jobDeath(signal: number): string {
  return signal === signalNumbers.INT || signal === signalNumbers.PIPE ? '' : `${signalDescriptions[signal] ?? `Signal ${signal}`}\n`;
}

/**
 * `kill -l` as busybox prints it: ` 1) HUP` one a line (29 is `POLL` there); `kill -l N` the name,
 * `kill -l NAME` the number.
 */
export function signalList(arg: string | undefined): ExecResult {
  const names = Object.entries(signalNumbers).map(([name, n]) => [n === 29 ? 'POLL' : name, n] as const);
  if (arg === undefined) return ok(names.map(([name, n]) => `${String(n).padStart(2)}) ${name}\n`).join(''));
  const hit = /^\d+$/.test(arg) ? names.find(([, n]) => n === Number(arg)) : names.find(([name]) => name === arg.toUpperCase().replace(/^SIG/, ''));
  if (!hit) return fail(`sh: kill: bad signal name '${arg}'\n`);
  return ok(`${/^\d+$/.test(arg) ? hit[0] : hit[1]}\n`);
}

/** Signals whose default action does not end a process (CHLD, CONT, STOP, TSTP, TTIN, TTOU, URG, WINCH). */
export const harmlessSignals = new Set([17, 18, 19, 20, 21, 22, 23, 28]);

const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** Name of a uid or gid from the guest's /etc/passwd or /etc/group, if it has one. */
async function nameOf(fs: IFileSystem, file: '/etc/passwd' | '/etc/group', id: number): Promise<string | undefined> {
  const text = await fs.readFile(file).catch(() => '');
  return text
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[2] === String(id))?.[0];
}

/**
 * The programs whose output depends on the machine and the process rather than on files:
 * `uname` (the host's kernel, as a container sees it, and the instance's name), `hostname`,
 * `id`, `whoami` (from the guest's passwd and group) and `kill` (busybox's wording).
 */
export function guestCommands(proc: GuestProcess): Command[] {
  const uname: Command = {
    name: 'uname',
    async execute(args) {
      const fields: Record<string, string> = {
        s: 'Linux',
        n: proc.hostname(),
        r: release(),
        v: version(),
        m: machine(),
        p: 'unknown',
        i: 'unknown',
        o: 'GNU/Linux',
      };
      const wanted = new Set<string>();
      for (const a of args) {
        if (a === '--help') return ok('Usage: uname [-amnrspvio]\n');
        if (!a.startsWith('-')) return fail(`uname: extra operand '${a}'\n`);
        for (const c of a.slice(1)) {
          if (c === 'a') ['s', 'n', 'r', 'v', 'm', 'o'].forEach((f) => wanted.add(f));
          else if (c in fields) wanted.add(c);
          else return fail(`uname: invalid option -- '${c}'\n`);
        }
      }
      if (wanted.size === 0) wanted.add('s');
      return ok(
        `${['s', 'n', 'r', 'v', 'm', 'p', 'i', 'o']
          .filter((f) => wanted.has(f))
          .map((f) => fields[f])
          .join(' ')}\n`,
      );
    },
  };
  const hostname: Command = {
    name: 'hostname',
    async execute(args, ctx) {
      const help = helpAsked(args, hostnameUsage);
      if (help) return help;
      const parsed = getopt('hostname', hostnameUsage, args, 'dfisv', 'F');
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      // libbb's safe_gethostname: an empty node name is `?`.
      const name = proc.hostname() || '?';
      const short = name.split('.')[0]!;
      if (opts.has('d') || opts.has('f') || opts.has('i')) {
        // The name is looked up (gethostbyname): the beds' containers have no hosts file and no
        // resolver to ask, so only a numeric address resolves (inet_aton's forms: `1.2` is 1.0.0.2).
        const address = inetAton(name);
        if (address === undefined) return fail(`hostname: ${name}: ${validHostname(name) ? 'Host name lookup failure' : 'Unknown host'}\n`);
        const dot = name.indexOf('.');
        if (opts.has('f')) return ok(`${name}\n`);
        if (opts.has('s')) return ok(`${short}\n`);
        if (opts.has('d')) return ok(dot < 0 ? '' : `${name.slice(dot + 1)}\n`);
        return ok(`${address}\n`);
      }
      if (opts.has('s')) return ok(`${short}\n`);
      const file = opts.get('F');
      if (typeof file === 'string') {
        const path = posix.resolve(ctx.cwd, file);
        const refused = await openRefusal(ctx.fs, path);
        const text = refused ? undefined : await ctx.fs.readFile(path).catch(() => undefined);
        if (text === undefined) return fail(`hostname: can't open '${file}': ${refused ?? 'No such file or directory'}\n`);
        // Each line's first word sets it, but comments and empty lines: the last one is the name left.
        for (const line of text.split('\n')) {
          const word = line
            .replace(/#.*/, '')
            .trim()
            .split(/[ \t]+/)[0];
          const refusal = word ? setHostname(word) : undefined;
          if (refusal) return refusal;
        }
        return ok('');
      }
      return operands[0] === undefined ? ok(`${name}\n`) : (setHostname(operands[0]) ?? ok(''));
    },
  };
  /** sethostname(2) in the container's own UTS namespace: root may (64 bytes at most), another user not; the refusal, if refused. */
  const setHostname = (wanted: string): ExecResult | undefined => {
    if (proc.uid !== 0) return fail('hostname: sethostname: Operation not permitted\n');
    if (Buffer.byteLength(wanted, 'utf8') > 64) return fail('hostname: sethostname: Invalid argument\n');
    proc.setHostname(wanted);
    return undefined;
  };
  const id: Command = {
    name: 'id',
    async execute(args, ctx) {
      const user = await nameOf(ctx.fs, '/etc/passwd', proc.uid);
      const group = await nameOf(ctx.fs, '/etc/group', proc.gid);
      const flags = args.join('').replace(/-/g, '');
      const named = flags.includes('n');
      if (flags.includes('u')) return ok(`${named ? (user ?? proc.uid) : proc.uid}\n`);
      if (flags.includes('g') || flags.includes('G')) return ok(`${named ? (group ?? proc.gid) : proc.gid}\n`);
      const part = (key: string, n: number, name: string | undefined) => `${key}=${n}${name === undefined ? '' : `(${name})`}`;
      return ok(`${part('uid', proc.uid, user)} ${part('gid', proc.gid, group)}\n`);
    },
  };
  const whoami: Command = {
    name: 'whoami',
    async execute(_args, ctx) {
      const user = await nameOf(ctx.fs, '/etc/passwd', proc.uid);
      return user === undefined ? fail(`whoami: unknown uid ${proc.uid}\n`) : ok(`${user}\n`);
    },
  };
  const kill: Command = {
    name: 'kill',
    async execute(args, ctx) {
      let signal = 15;
      const pids: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-l') return signalList(args[i + 1]);
        if (a === '-s' || a === '-n') {
          const parsed = parseSignal(args[++i] ?? '');
          if (parsed === undefined) return fail(`sh: kill: bad signal name '${args[i] ?? ''}'\n`);
          signal = parsed;
        } else if (a.startsWith('-') && pids.length === 0 && a !== '-') {
          const parsed = parseSignal(a.slice(1));
          if (parsed === undefined) return fail(`sh: kill: bad signal name '${a.slice(1)}'\n`);
          signal = parsed;
        } else pids.push(a);
      }
      if (pids.length === 0) return fail('kill: usage: kill [-s SIG | -SIG] PID...\n');
      let code = 0;
      let stderr = '';
      for (const p of pids) {
        // A job spec: the job's pid, running or a zombie until ash forgets it.
        if (p.startsWith('%')) {
          const job = proc.jobPid(p);
          if (job !== undefined) {
            proc.signalShell(job, signal);
            continue;
          }
          return { stdout: '', stderr: `${stderr}bash: kill: line ${lineOf(ctx)}: ${p}: no such job\n`, exitCode: 2 };
        }
        const pid = Number(p);
        // PID 1 (init) and the shell itself exist: init exits on a signal it traps so (the instance then stops).
        if (pid === 1) {
          if (signal !== 0) proc.signalInit(signal);
          continue;
        }
        if (proc.signalShell(pid, signal)) continue;
        if (pid === proc.pid) {
          // A signal whose default does nothing still runs the shell's trap on it (killSelf ignores it without one).
          if (signal !== 0) proc.killSelf(signal);
          continue;
        }
        stderr += `sh: can't kill pid ${p}: No such process\n`;
        code = 1;
      }
      return { stdout: '', stderr, exitCode: code };
    },
  };
  return [uname, hostname, id, whoami, kill];
}

function parseSignal(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) <= 64 ? Number(text) : undefined;
  const name = text.toUpperCase().replace(/^SIG/, '');
  return signalNumbers[name];
}

/**
 * A scripted program: its registered outcomes, or the built-in program it shadows, or "not found".
 * `ended` is told when a call's outcome is over (`interrupted` when a signal cut it short).
 */
export function scriptedCommand(
  name: string,
  take: (argv: string[]) => CommandOutcome | undefined,
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>,
  ended: (outcome: CommandOutcome, interrupted: boolean) => void = () => {},
): Command {
  return {
    name,
    async execute(args, ctx) {
      const outcome = take([name, ...args]);
      if (!outcome) return ctx.origCommand ? ctx.origCommand(args) : fail(`sh: ${name}: not found\n`, 127);
      if (outcome.hang) await sleep(Number.POSITIVE_INFINITY, ctx.signal);
      else if (outcome.delayMs) await sleep(outcome.delayMs, ctx.signal);
      ended(outcome, ctx.signal?.aborted === true);
      return { stdout: outcome.stdout ?? '', stderr: outcome.stderr ?? '', exitCode: outcome.exitCode ?? 0 };
    },
  };
}

/** Busybox's `sleep`: seconds, or with a suffix s, m, h or d, fractions allowed; several are added up. */
export function sleepCommand(sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>): Command {
  const unit: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };
  return {
    name: 'sleep',
    async execute(args, ctx) {
      const usage =
        `${banner}Usage: sleep [N]...\n\nPause for a time equal to the total of the args given, where each arg can\n` +
        'have an optional suffix of (s)econds, (m)inutes, (h)ours, or (d)ays\n';
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      if (args.length === 0) return fail(usage);
      let seconds = 0;
      for (const a of args) {
        const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(a);
        if (!m) return fail(`sleep: invalid number '${a}'\n`);
        seconds += Number(m[1]) * unit[m[2]!]!;
      }
      await sleep(seconds * 1000, ctx.signal);
      return ok();
    },
  };
}

/**
 * `cat` with busybox's words for a file it cannot open (`cat: can't open 'F': No such file or
 * directory`, as the test beds' busybox prints it on LXD and Incus) where just-bash says it as
 * coreutils does (`cat: F: No such file or directory`).
 */
export function catCommand(): Command {
  return {
    name: 'cat',
    async execute(args, ctx) {
      if (!ctx.origCommand) return fail('sh: cat: not found\n', 127);
      const result = await ctx.origCommand(args);
      if (result.stderr === '') return result;
      return rewordStderr(result, async (text) => {
        let stderr = '';
        for (const line of text.split(/(?<=\n)/)) {
          const m = /^cat: (.*): No such file or directory(\n?)$/.exec(line);
          // A symlink loop is not a missing file: open(2) says ELOOP; nor is one the user may not read
          // (EACCES), nor /dev/tty without a terminal (ENXIO).
          const path = m && posix.resolve(ctx.cwd, m[1]!);
          const why = !path
            ? ''
            : ((await openRefusal(ctx.fs, path)) ??
              ((await symlinkLoop(ctx.fs, path, true)) ? 'Too many levels of symbolic links' : 'No such file or directory'));
          stderr += m ? `cat: can't open '${m[1]}': ${why}${m[2]}` : line;
        }
        return stderr;
      });
    },
  };
}

/** busybox 1.35's `hostname` usage, as the beds print it. */
const hostnameUsage = `Usage: hostname [-sidf] [HOSTNAME | -F FILE]

Show or set hostname or DNS domain name

\t-s\tShort
\t-i\tAddresses for the hostname
\t-d\tDNS domain name
\t-f\tFully qualified domain name
\t-F FILE\tUse FILE's content as hostname
`;

/**
 * The IPv4 address gethostbyname reads NAME as without asking anyone, if it is one: glibc takes a
 * name of digits and dots as inet_aton does (`a`, `a.b`, `a.b.c`, `a.b.c.d`; a part with a leading
 * 0 octal), so `1.2` is 1.0.0.2.
 */
function inetAton(name: string): string | undefined {
  const parts = name.split('.');
  if (parts.length > 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    if (!/^(0[0-7]*|[1-9][0-9]*)$/.test(part)) return undefined;
    values.push(part.startsWith('0') ? Number.parseInt(part, 8) : Number(part));
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return undefined;
  const bytes = [...values, ...[0, 0, 0, 0].slice(values.length)];
  for (let i = 3, rest = last; i >= values.length; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  return bytes.join('.');
}

/** Whether glibc's resolver would ask for NAME (res_hnok): labels of letters, digits, `-` and `_`, none empty, not starting with `-`. */
const validHostname = (name: string): boolean => !name.startsWith('-') && /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(name);
