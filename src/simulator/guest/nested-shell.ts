import type { Command, CommandContext, ExecResult } from 'just-bash';
import type { TerminalInput } from './busybox-tty.js';
import { ashOptionLetters, ashOptionNames, ashOptionsLeftOff } from './ash-options.js';
import { busyboxVersion } from './busybox-getopt.js';
import { jobDeath } from './guest-commands.js';
import { followedBy, orderOf, rewordedWrites, type OutputPart } from './program-output.js';
import { defaultPath } from './guest-programs.js';
import { shellQuote } from './program-run.js';
import type { parse as parseScript } from 'just-bash';
import { runToSyntaxError, utf8 as utf8Bytes, type ScriptSource, type ScriptStream } from './script-feed.js';
import type { ShellBuiltins } from './shell-builtins.js';
import type { SignalTraps } from './signal-traps.js';

/**
 * The variables busybox's ash sets when it starts, not exported, where its environment has none
 * (patches/README.md 54): `HOSTNAME` (the uname's node name), `OPTIND`, and the prompts `PS1`,
 * `PS2` and `PS4`; `set` lists them with `FUNCNAME`, `LINENO` and `PPID`.
 */
export const ashStartVariables = (hostname: string): Record<string, string> => ({
  HOSTNAME: hostname,
  OPTIND: '1',
  PS1: '\\w \\$ ',
  PS2: '> ',
  PS4: '+ ',
});

/**
 * The shells a command starts inside its own: `sh -c CMD`, `sh FILE`, `sh` reading its stdin, and a
 * script run by its path (the kernel starts its `#!` interpreter, `/bin/sh FILE`). Each is a process
 * of its own, as on the beds: its own `$$` (and `$PPID` the shell that started it), the exported
 * variables only (no functions, no variables it was not given), its own traps and EXIT trap, a umask
 * it inherits but keeps to itself, and a signal sent to its `$$` ends it alone, its parent saying
 * how it died (`Terminated`) and going on with 128 + the signal. just-bash runs such a shell in the
 * same process and with the top shell's `$$`; the patched shell takes the `$$` it is given
 * (`jbPid`, `patches/README.md`).
 */
export class ShellProcesses {
  /** The shells running now, innermost last. */
  private readonly running: ShellProcess[] = [];
  private lastPid: number;
  /** The exec's stdin as it arrives, or its terminal's lines, for the first bare shell (the exec's own `sh`): taken once. */
  stdinScript?: StreamedScript;
  /** The terminal session's lines, once its shell has taken them: a bare shell started on that terminal reads them too. */
  private terminal?: StreamedScript;

  /** @param topPid The command's own shell (`$$` of the exec). */
  constructor(
    private readonly topPid: number,
    private readonly builtins: ShellBuiltins,
    /** just-bash's parser: a script with a syntax error runs the commands before its line first. */
    private readonly parse: typeof parseScript,
    /** What each shell sets at its start ({@link ashStartVariables}), as it starts. */
    private readonly startVariables: () => Record<string, string>,
  ) {
    // The exec's shell is topPid and the program it runs topPid + 1 (/proc/self): shells started inside come after.
    this.lastPid = topPid + 1;
  }

  /** Whether a shell started inside the command's is running (what runs now is its). */
  get inside(): boolean {
    return this.running.length > 0;
  }

  /**
   * A signal for `pid` (`kill`): true when it is a shell running inside the command's (signal 0 only
   * asks whether it is), which takes it as its traps say or dies of it; false for any other pid.
   */
  signal(pid: number, signal: number): boolean {
    const shell = this.running.find((p) => p.pid === pid);
    if (!shell) return false;
    if (signal !== 0 && !shell.signals.deliver(signal)) shell.signals.endWith(signal);
    return true;
  }

  /** `sh` (busybox's `ash` by its other name) and what a script by its path runs: each call a shell process of its own. */
  command(name: 'sh' | 'ash'): Command {
    return { name, execute: (args, ctx) => this.run(name, args, ctx) };
  }

  /** A terminal's lines for the first bare shell started on it by a command that is not one (`su`, `sh -c sh` on a terminal). */
  offerTerminal(streamed: StreamedScript): void {
    this.terminal = streamed;
  }

  /**
   * The session's terminal for a bare shell whose stdin it is (`sh` typed at the prompt): an
   * interactive shell of its own on the same lines, as ash started on a terminal, until its `exit`
   * or Ctrl-D, when the shell that started it reads the terminal again.
   */
  private onTheTerminal(ctx: CommandContext): StreamedScript | undefined {
    const tty = terminalOf(ctx);
    return tty && tty === this.terminal?.tty ? this.terminal : undefined;
  }

  /** A script run by its path, as the kernel does: `/bin/sh PATH ARGS…`, PATH as the command gave it. */
  script(path: string): Command {
    return { name: 'sh', execute: (args, ctx) => this.run('sh', [path, ...args], ctx) };
  }

  private async run(program: 'sh' | 'ash', args: string[], ctx: CommandContext): Promise<ExecResult> {
    if (args[0] === '--help' && ctx.origCommand) return ctx.origCommand(args);
    // The name it goes by: a login shell's `-sh` when su started it so ($0 and its messages).
    const { [loginArgv0]: argv0, ...exported } = ctx.exportedEnv ?? {};
    const called = argv0 === `-${program}` ? argv0 : program;
    const streamed = args.length === 0 ? (this.stdinScript ?? this.onTheTerminal(ctx)) : undefined;
    if (streamed === this.stdinScript) this.stdinScript = undefined;
    const source = streamed ? await streamedSource(called, streamed) : await scriptOf(called, args, ctx);
    if ('exitCode' in source) return source;
    // A login shell reads /etc/profile and ~/.profile first, each that exists (ash's `read_profile`), on its script's first line.
    if (called.startsWith('-') || source.login) source.script = (await profiles(ctx, exported.HOME)) + source.script;
    if (streamed?.interactive) {
      this.terminal = streamed;
      streamed.write(shellBanner, '', [[1, shellBanner, false]]);
    }
    // A script read from stdin is ash's: it reads 1023 bytes at a time, so the commands of a script
    // that fits in its first read (`read`, `cat`) find stdin at its end, where the others read the
    // shell's stdin. (A longer script leaves its commands the rest on the beds, and the shell reads
    // on after what they took: not modelled.)
    const exec = source.from === 1 ? ctx.exec : ctx.execWithInheritedStdin;
    if (!exec || !ctx.exec) return { stdout: '', stderr: `${called}: internal error: exec function not available\n`, exitCode: 1 };
    const ppid = this.running.at(-1)?.pid ?? this.topPid;
    const state = this.builtins.spawn();
    const shell: ShellProcess = { pid: ++this.lastPid, signals: state.signals };
    this.running.push(shell);
    try {
      // An interactive shell has the terminal's lines until it ends (the program that started it has them again).
      if (streamed?.interactive) streamed.feed.shellStarted?.();
      const env: Record<string, string> = { ...exported, '0': source.name, '#': String(source.positional.length) };
      env['@'] = env['*'] = source.positional.join(' ');
      source.positional.forEach((value, i) => (env[String(i + 1)] = value));
      env.SHLVL = String((Number.parseInt(env.SHLVL ?? '', 10) || 0) + 1);
      env.PATH ??= defaultPath;
      const process = { jbPid: shell.pid, jbPpid: ppid };
      // `$-` names how the shell reads its script, as ash's: `c` for -c, `s` for stdin, `smi` on a terminal.
      const flags = streamed?.interactive ? 'smi' : source.from === 1 ? 's' : source.from === 2 ? '' : 'c';
      // What its `read` and programs read: the terminal, the session's or the one its stdin is (`sh -c 'read x'` at the prompt).
      const tty = streamed?.tty ?? terminalOf(ctx);
      // Where the command that started it writes to a terminal, what the shell writes goes out as
      // each of its pipelines ends (`sh -c 'echo q; read a'` typed at the prompt: the question
      // before the answer), as ash's goes as written.
      const show = (ctx as CommandContext & { jbShow?: (written: ExecResult) => void }).jbShow;
      // The text a syntax error's position is in: the script, or the part of a streamed one parsed last.
      const script = (): string => streamed?.feed.lastPart ?? source.script;
      const execute = (text: string, stream?: ScriptStream): Promise<ExecResult> =>
        exec(text, {
          env,
          replaceEnv: true,
          cwd: ctx.cwd,
          signal: ctx.signal,
          jbFromFile: source.from === 1 || source.from === 2,
          jbScript: source.from === 2 || source.from === 3,
          jbFlags: flags,
          jbShellVars: this.startVariables(),
          ...(source.set ? { jbOptions: source.set } : {}),
          ...(source.from === 1 ? { stdin: '' } : {}),
          jbFds: (ctx as CommandContext & { jbFds?: unknown }).jbFds,
          // It ends before its jobs: what they write later is handed to the shell that started it (`jbBgRest`).
          jbKeepJobs: true,
          // The patched interpreter runs each part as it comes, handing out what was written before it waits.
          ...(stream ? { jbStream: stream } : {}),
          ...(tty ? { jbTty: tty } : {}),
          ...process,
        } as Parameters<typeof exec>[1]);
      const result = await state.run(() =>
        streamed
          ? execute(source.script, {
              next: (shellState) => streamed.feed.next(shellState),
              cut: () => streamed.feed.cut?.() ?? false,
              flush: (written) => {
                const words = (text: string) => shellMessages(text, source.name, script());
                streamed.write(written.stdout, words(written.stderr), rewordedWrites(written as ExecResult, words));
              },
            })
          : runToSyntaxError(
              this.parse,
              source.script,
              execute,
              show && ((written) => show(named(written as ExecResult, source.name, script(), source.from === 2))),
            ),
      );
      // Its jobs that hold its output go on after it: the patched interpreter adopts them as the starting shell's.
      const { jbBgRest } = result as ExecResult & { jbBgRest?: Promise<ExecResult[]> };
      const jobs = jbBgRest ? { jbBgRest } : {};
      const number = shell.signals.endedBy;
      if (number !== undefined) {
        // Killed: no EXIT trap; its parent says how it died (ash's `sprint_status` of a foreground job), but for INT and PIPE.
        // A job that runs the shell (`sh -c … &`) is that shell on the beds: killed with it, it says nothing of it (its `wait` does).
        const said = this.builtins.killed().aborted ? '' : jobDeath(number);
        const died = named(result, source.name, script(), source.from === 2);
        return { ...died, stderr: `${died.stderr}${said}`, exitCode: 128 + number, ...jobs };
      }
      const action = state.exitTrap();
      const exitTrap = ctx.exec;
      const trapped = action
        ? await state.run(() =>
            exitTrap(action, {
              env: result.env ?? env,
              replaceEnv: true,
              cwd: result.env?.PWD ?? ctx.cwd,
              stdin: '',
              ...endedShell(result, flags),
              ...process,
            } as Parameters<typeof exitTrap>[1]),
          )
        : undefined;
      // The result as the shell gave it (raw bytes, the order of its writes), the EXIT trap's output after it.
      const ended = trapped ? { ...followedBy(result, trapped), exitCode: statusAfterExitTrap(result, trapped) } : result;
      const whole = source.said
        ? { ...ended, ...followedBy({ stdout: '', stderr: source.said, exitCode: 0 }, ended), exitCode: ended.exitCode }
        : ended;
      return { ...named(whole, source.name, script(), source.from === 2), ...jobs };
    } finally {
      this.running.splice(this.running.indexOf(shell), 1);
      if (streamed?.interactive) streamed.feed.shellEnded?.();
    }
  }
}

/** A shell running inside the command's. */
interface ShellProcess {
  pid: number;
  signals: SignalTraps;
}

/** The terminal a command's stdin is, when it is one (the patched interpreter's `jbTty` in its context). */
function terminalOf(ctx: CommandContext): TerminalInput | undefined {
  return (ctx as CommandContext & { jbTty?: TerminalInput }).jbTty;
}

/** What busybox ash prints when it starts on a terminal, the session's shell and one started at its prompt alike. */
const shellBanner = `\n\n${busyboxVersion} built-in shell (ash)\nEnter 'help' for a list of built-in commands.\n\n`;

/** A shell's script read from the exec's stdin as it arrives (or its terminal's lines), and where what it writes meanwhile goes. */
export interface StreamedScript {
  feed: ScriptSource;
  /** The lines of an interactive shell (a terminal session's): messages without line numbers, the first part asked for once the shell runs. */
  interactive?: boolean;
  /** The terminal the interactive shell reads its `read`s from (the patched interpreter's `jbTty`). */
  tty?: TerminalInput;
  /** Output written before the shell waits for more of its script: text as just-bash gives it, messages named, and both in the order written. */
  write(stdout: string, stderr: string, writes: OutputPart[]): void;
}

/**
 * A bare shell's script as it arrives: the first part now, the rest as the shell asks (none: it ends
 * at once, status 0). An interactive shell starts with nothing to do (`:`) and asks for its first
 * line from its running state, as for every other.
 */
async function streamedSource(called: string, streamed: StreamedScript): Promise<Source | ExecResult> {
  if (streamed.interactive) return { script: ':', name: called, positional: [] };
  const first = await streamed.feed.next();
  return first === undefined ? { stdout: '', stderr: '', exitCode: 0 } : { script: first, name: called, positional: [], from: 1 };
}

/**
 * The variable that gives a shell its `argv[0]` (`-sh`: a login shell, as busybox's su runs it),
 * taken out of its environment.
 */
export const loginArgv0 = '__REFLEX_ARGV0';

/** `. FILE; ` for each of the login shell's profiles that exists, in the order ash reads them. */
async function profiles(ctx: CommandContext, home: string | undefined): Promise<string> {
  const files = ['/etc/profile', ...(home ? [`${home.replace(/\/$/, '')}/.profile`] : [])];
  let read = '';
  for (const file of files) if (await ctx.fs.exists(file)) read += `. ${shellQuote(file)}; `;
  return read;
}

/** What the shell runs: its script, the name it goes by ($0 and its messages), its arguments, and where the script came from. */
interface Source {
  script: string;
  name: string;
  positional: string[];
  /** 1: its stdin; 2: a file; 3: `-c` with a name; undefined: `-c` alone (just-bash's `jbFromFile`/`jbScript`). */
  from?: 1 | 2 | 3;
  /** Started with `-l`: a login shell, as one whose name starts with `-`. */
  login?: boolean;
  /** The options its command line set (`-e`, `-x`, `-o pipefail` …, `+` to unset): the shell has them from its first command on. */
  set?: Record<string, boolean>;
  /** What the shell says as it starts, before its script's output (`-m` without a terminal). */
  said?: string;
}

/** The script `sh ARGS` runs, as busybox's sh reads its arguments (`-c CMD [NAME [ARGS…]]`, `FILE [ARGS…]`, none: stdin). */
async function scriptOf(called: string, args: string[], ctx: CommandContext): Promise<Source | ExecResult> {
  const options = shellOptions(called, args);
  if ('exitCode' in options) return options;
  const { command, stdin, set, operands, login, said } = options;
  if (command) {
    if (operands.length === 0) return { stdout: '', stderr: `${called}: -c requires an argument\n`, exitCode: 2 };
    return { script: operands[0]!, name: operands[1] || called, positional: operands.slice(2), from: operands[1] ? 3 : undefined, login, set, said };
  }
  if (stdin || operands.length === 0) {
    const text = utf8(String(ctx.stdin ?? ''));
    return text.trim() ? { script: text, name: called, positional: operands, from: 1, login, set, said } : { stdout: '', stderr: '', exitCode: 0 };
  }
  const [file, ...positional] = operands as [string, ...string[]];
  let text: string;
  try {
    text = await ctx.fs.readFile(ctx.fs.resolvePath(ctx.cwd, file));
  } catch (err) {
    const code = String((err as { code?: string }).code ?? (err as Error).message ?? '');
    if (/EISDIR/.test(code)) return { stdout: '', stderr: '', exitCode: 0 };
    const why = /EACCES/.test(code)
      ? 'Permission denied'
      : /ENOTDIR/.test(code)
        ? 'Not a directory'
        : /ELOOP/.test(code)
          ? 'Too many levels of symbolic links'
          : 'No such file or directory';
    return { stdout: '', stderr: `${called}: can't open '${file}': ${why}\n`, exitCode: 2 };
  }
  // The `#!` line is a comment to the shell; the newline stays, so line numbers count it.
  if (text.startsWith('#!')) text = text.slice(text.includes('\n') ? text.indexOf('\n') : text.length);
  return { script: text, name: file, positional, from: 2, login, set, said };
}

/**
 * busybox sh's options before its operands (`sh [-/+OPTIONS] [-/+o OPT]… [-c SCRIPT [ARG0 ARGS] |
 * FILE ARGS | -s ARGS]`, letters alone or together, `--` ending them): `-c` and `-s` say where the
 * script comes from, `set`'s letters and `-o NAME` (`+` to unset) are settings ({@link ashOptionLetters}),
 * `-l` makes a login shell, `-i` is taken and changes nothing here. Another letter is `illegal
 * option`, 2; an unknown `-o NAME` is one too, and the shell ends with 0 (as busybox 1.35's does).
 */
function shellOptions(
  called: string,
  args: string[],
): { command: boolean; stdin: boolean; login: boolean; set: Record<string, boolean>; said?: string; operands: string[] } | ExecResult {
  const found: { command: boolean; stdin: boolean; login: boolean; set: Record<string, boolean>; said?: string } = {
    command: false,
    stdin: false,
    login: false,
    set: {},
  };
  const setting = (name: string, on: boolean) => {
    if (!ashOptionsLeftOff.has(name)) found.set[name] = on;
    // Job control needs the terminal the shell does not have: it says so and goes on without it.
    else if (name === 'monitor' && on) found.said = `${called}: can't access tty; job control turned off\n`;
  };
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (!/^[-+][A-Za-z]+$/.test(arg)) break;
    const sign = arg[0]!;
    for (const letter of arg.slice(1)) {
      if (letter === 'c' && sign === '-') found.command = true;
      else if (letter === 's' && sign === '-') found.stdin = true;
      else if (letter === 'o' && args[i + 1] !== undefined) {
        const name = args[++i]!;
        if (!ashOptionNames.includes(name)) return { stdout: '', stderr: `${called}: illegal option ${sign}o ${name}\n`, exitCode: 0 };
        setting(name, sign === '-');
      } else if (Object.hasOwn(ashOptionLetters, letter)) setting(ashOptionLetters[letter]!, sign === '-');
      else if (letter === 'l' && sign === '-') found.login = true;
      else if (letter !== 'i') return { stdout: '', stderr: `${called}: illegal option ${sign}${letter}\n`, exitCode: 2 };
    }
  }
  return { ...found, operands: args.slice(i) };
}

/**
 * The status a shell ends with after its EXIT trap: the trap's own when it ran `exit` (ash's
 * exitshell takes an EXEXIT's status; the patched shell marks a script that exited, `jbExited`),
 * else the script's.
 */
export function statusAfterExitTrap(result: ExecResult, trapped: ExecResult | undefined): number {
  return trapped && (trapped as ExecResult & { jbExited?: boolean }).jbExited ? trapped.exitCode : result.exitCode;
}

/**
 * What a shell's EXIT trap is run with of the shell as it ended (the patched interpreter's options,
 * patches/README.md 42): the status it ends with as `$?`, its `set` options (`set -x` traces the
 * trap's commands) and, for `$-`, how it read its script (`flags`: `c`, `s`, `smi`).
 */
export function endedShell(result: ExecResult, flags: string): { jbStatus: number; jbOptions?: object; jbFlags: string } {
  return { jbStatus: result.exitCode, jbOptions: (result as ExecResult & { jbOptions?: object }).jbOptions, jbFlags: flags };
}

/** The shell's result with its messages named ({@link shellMessages}), the rest of it (raw bytes, the order of its writes) as it is, less the accounting of the stderr it rewords. */
function named(result: ExecResult, name: string, script: string, numbered: boolean): ExecResult {
  if (!result.stderr) return result;
  const { internalOutputAccounting: _accounting, ...rest } = result as ExecResult & { internalOutputAccounting?: unknown };
  // Each message is named where it was written: the order of the writes and the mark the patched
  // shell puts on a write to a copy of its stdout (patches/README.md 34, a fourth element) stay.
  const jbLog = orderOf(result).map((part) =>
    part[0] === 2 ? (Object.assign([...part], { 1: shellMessages(part[1], name, script, numbered) }) as OutputPart) : part,
  );
  const stderr = jbLog
    .filter((part) => part[0] === 2)
    .map((part) => part[1])
    .join('');
  return { ...rest, stderr, jbLog } as ExecResult;
}

/**
 * A busybox shell's messages, which just-bash words as bash's: under the name the shell goes by
 * (`sh`, `/bin/sh`, a script's path), a program it cannot find, by name or by path, `X: not found`,
 * and its syntax errors in ash's words (`script` is the text their positions are in; `numbered`: a
 * script read from a file, whose syntax errors name their line).
 */
export function shellMessages(stderr: string, name: string, script?: string, numbered = false): string {
  return (
    ashSyntaxErrors(stderr, script, numbered)
      .replace(/^bash: (.*): command not found$/gm, `${name}: $1: not found`)
      // just-bash's word for a program it knows but was not given (python3, sqlite3, yq …): not found, as busybox says.
      .replace(/^bash: (.*): command not available in browser environments\..*$/gm, `${name}: $1: not found`)
      .replace(/^bash: ([^\s:]*\/[^\s:]*): No such file or directory$/gm, `${name}: $1: not found`)
      .replace(/^bash: /gm, `${name}: `)
  );
}

/** ash's message for the syntax error in `text` (a shell's message name `name`), as an interactive ash prints it; undefined when it parses. */
export function syntaxErrorMessage(parse: typeof parseScript, text: string, name: string): string | undefined {
  try {
    parse(text);
    return undefined;
  } catch (err) {
    // just-bash words an unclosed quote as bash does, `line N: unexpected EOF while looking for …`, and the parser's errors `syntax error: …`.
    const message = (err as Error).message;
    return shellMessages(`bash: ${/^line \d+: /.test(message) ? '' : 'syntax error: '}${message}\n`, name, text);
  }
}

/**
 * A token as ash names it in a syntax error (`tokname`): the end of the input, a newline, a word
 * and a redirection by what they are; a keyword or an operator quoted.
 */
function ashToken(type: string): string {
  if (type === 'EOF') return 'end of file';
  if (type === 'NEWLINE') return 'newline';
  if (/^(?:WORD|NAME|NUMBER|ASSIGNMENT_WORD|FD_VARIABLE|DBRACK_START|DBRACK_END)$/.test(type)) return 'word';
  if (/^(?:LESS|GREAT|DLESS|DGREAT|LESSAND|GREATAND|LESSGREAT|DLESSDASH|CLOBBER|TLESS|AND_GREAT|AND_DGREAT)$/.test(type)) return 'redirection';
  return `"${operators[type] ?? type.toLowerCase()}"`;
}

/** just-bash's names of the operators ash quotes as they are typed (a keyword's name is the keyword). */
const operators: Record<string, string> = {
  SEMICOLON: ';',
  AMP: '&',
  PIPE: '|',
  PIPE_AMP: '|&',
  AND_AND: '&&',
  OR_OR: '||',
  BANG: '!',
  LPAREN: '(',
  RPAREN: ')',
  LBRACE: '{',
  RBRACE: '}',
  DSEMI: ';;',
  SEMI_AND: ';&',
  SEMI_SEMI_AND: ';;&',
  DPAREN_START: '(',
  DPAREN_END: ')',
};

/** What ash expects where just-bash's parser expected a token and met the end of the script (a case's `esac`: the `)` after a pattern ash reads first). */
const expectedAtEnd: Record<string, string> = { ESAC: '")"' };

/**
 * just-bash's syntax errors in busybox ash's words (recorded on LXD 5.0.2's busybox): `unexpected
 * "fi"` for a token out of place, `unexpected "fi" (expecting "}")` where a construct's list ends
 * at a token that does not close it, `unexpected end of file (expecting "fi")` for a construct the
 * script leaves open, `unterminated quoted string`, `EOF in backquote substitution`, `missing '}'`;
 * in a script read from a file (`numbered`), after the line (`FILE: line 3: syntax error: …`). The
 * patched parser (patches/README.md 64) says `Expected X, got Y` and `Unexpected Y` with its token
 * types, and what it words as ash does after `ash: `. A token just-bash says is unexpected at the
 * very end of `script` is the one ash expected there.
 */
function ashSyntaxErrors(stderr: string, script?: string, numbered = false): string {
  if (!stderr.includes('syntax error') && !stderr.includes('unexpected EOF') && !stderr.includes(': ash: ')) return stderr;
  const atEnd = (line: number, column: number): boolean => {
    if (script === undefined) return false;
    const lines = script.split('\n');
    return line > lines.length || (line === lines.length && column > lines.at(-1)!.length);
  };
  const words = (why: string, line: number, column: number): string | undefined => {
    if (why.startsWith('ash: ')) return why.slice('ash: '.length);
    if (/^unexpected EOF while looking for matching `["']'$/.test(why)) return 'unterminated quoted string';
    if (why === "unexpected EOF while looking for matching ``'") return 'EOF in backquote substitution';
    if (why === "unexpected EOF while looking for matching `)'") return 'unexpected end of file (expecting ")")';
    if (why === "unexpected EOF while looking for matching '}'") return "missing '}'";
    const [, expected, got] = /^Expected (\w+), got (\w+)$/.exec(why) ?? [];
    if (expected && got) {
      const wanted = (got === 'EOF' && expectedAtEnd[expected]) || (expected === 'WORD' ? 'word' : ashToken(expected));
      return `unexpected ${ashToken(got)} (expecting ${wanted})`;
    }
    const unexpected = /^Unexpected (\w+)$/.exec(why)?.[1];
    if (unexpected) return `unexpected ${ashToken(unexpected)}`;
    const token = /^syntax error near unexpected token `(.+)'$/.exec(why)?.[1];
    if (token) return atEnd(line, column) ? `unexpected end of file (expecting "${token}")` : `unexpected "${token}"`;
    return undefined;
  };
  return stderr.replace(
    /^bash: (eval: line \d+: )?(?:line (\d+): (unexpected EOF while looking for matching `["']'|ash: .*)|syntax error: Parse error at (-?\d+):(-?\d+): (.*))$/gm,
    (
      whole,
      evalAt: string | undefined,
      quoteLine: string | undefined,
      quote: string | undefined,
      line: string | undefined,
      column: string | undefined,
      why: string | undefined,
    ) => {
      // An unclosed quote is met at the end of the script, on its last line (ash's line count there).
      const unclosed = quote?.startsWith('unexpected EOF') && script !== undefined && !evalAt;
      const at = unclosed ? script.split('\n').length : Number(quoteLine ?? line);
      // eval's text is not `script`: its positions are its own, its end already worded by the patched eval.
      const said = words(quote ?? why ?? '', evalAt ? 0 : at, Number(column ?? 0));
      return said ? `bash: ${evalAt ?? (numbered ? `line ${at}: ` : '')}syntax error: ${said}` : whole;
    },
  );
}

/** Bytes (one character each) as UTF-8 text where they are valid UTF-8, as just-bash decodes a shell's stdin. */
function utf8(bytes: string): string {
  return /[^\u0000-\u00ff]/.test(bytes) ? bytes : utf8Bytes(Buffer.from(bytes, 'latin1'));
}
