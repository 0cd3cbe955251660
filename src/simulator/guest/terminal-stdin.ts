import { basename } from 'node:path';
import type { Command, ExecResult } from 'just-bash';

/**
 * How a program reads its stdin when that is a terminal, as busybox's do (recorded on LXD 5.0.2):
 * - `end`: to Ctrl-D, writing its output then (`wc`, `sort`, `tac` …);
 * - `lines`: writing each line's output as the line is typed (`cat`, `grep`, `tr`, `awk` …);
 * - `behind`: a line behind, writing a line's output when the next one is typed or at Ctrl-D
 *   (`sed`, which reads a line ahead to know the last one);
 * - `group`: a run of equal lines behind, writing its output when a different line is typed or at
 *   Ctrl-D (`uniq`, which tells a run's end by the next line);
 * - `rows`: by rows of 16 bytes, writing a row when its 16th byte is typed, and at Ctrl-D the last
 *   row and the offset that ends its output (`od`);
 * - `buffer`: a buffer at a time, each read of it to a Ctrl-D (`full_read`), and ending at a
 *   Ctrl-D that comes before anything else was typed for the next, writing its output then
 *   (`base64`: with lines typed, at a second Ctrl-D).
 */
type Reading = 'end' | 'lines' | 'behind' | 'group' | 'rows' | 'buffer';

/**
 * Whether a program run on all that was typed so far has what it wants, and ends there, the rest
 * typed going to the shell: `head` once a line more would not change its output, `grep -q` and
 * `grep -l` at the first line they select, `grep -m N` at the Nth.
 */
type Ends = (result: ExecResult, typed: string, run: (text: string) => Promise<ExecResult>) => Promise<boolean>;

/** How a program reads the terminal: what it writes as lines come, and when it ends before Ctrl-D. */
interface HowItReads {
  reading: Reading;
  ends?: Ends;
  /**
   * For a program that runs a command for each batch of its input as the batch is whole (`xargs -n
   * N`, `-I`): where the last whole batch in what was typed ends. Each batch is run once, on its
   * own, as it comes (the command's effects are not repeated), not the program again on all typed.
   */
  batches?: (typed: string) => number;
}

/** `head`'s end: one more line would not change its output. */
const headEnds: Ends = async (result, typed, run) => {
  const more = await run(`${typed}\n`);
  return more.stdout === result.stdout && more.exitCode === result.exitCode;
};

/** A program's result that says how many bytes of its stdin it left unread when it ended (sed after a `q`). */
export type StdinLeft = { jbStdinLeft?: number };

/**
 * `sed`'s end with a `q` in its script (busybox 1.35 has no `Q`): sed reads a line ahead, so a `q` on a line is run
 * once the next is typed, and ends sed there (that next line read, and gone). Run on all typed and
 * one line more, it then leaves that line unread; run further, it reads it.
 */
const sedQuits: Ends = async (_result, typed, run) => ((await run(`${typed}\n`)) as StdinLeft).jbStdinLeft !== undefined;

/**
 * The line {@link awkExits} adds after what was typed, and the status the rule {@link probedArgs}
 * puts first in the program ends awk with when it reads that line: a line nobody types (it has
 * two Ctrl-A), a status no awk program here is run for.
 */
const awkProbe = '\x01reflex-awk-probe\x01';
const awkProbeStatus = 213;

/**
 * An awk program's end by its `exit`: awk reads no line after the one it exits on (no read-ahead),
 * so it ended on the lines typed when, run on them and the probe line, it never reads the probe
 * ({@link probedArgs}).
 */
const awkExits: Ends = async (_result, typed, run) => (await run(`${typed}${awkProbe}\n`)).exitCode !== awkProbeStatus;

/**
 * The arguments a bundled program is run with: awk's own, but when its stdin ends with the probe
 * line of {@link awkExits}, its program with a first rule that ends it there with
 * {@link awkProbeStatus}. Its stdin is looked at only where awk reads it (no file operand): a look
 * is a read to the patched shell, which then has a program on a terminal read the terminal.
 */
export function probedArgs(program: string, args: string[], stdin: () => string): string[] {
  if (program !== 'awk' || hasOption(args, /^f/, /^--file/)) return args;
  const at = programOperand(args, 'Fvf');
  if (at === undefined) return args;
  const files = args.slice(at + 1).some((a) => a !== '-' && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(a));
  if (files || !stdin().endsWith(`${awkProbe}\n`)) return args;
  const probed = [...args];
  probed[at] = `$0 == "${awkProbe}" { exit ${awkProbeStatus} }\n${probed[at]}`;
  return probed;
}

/** `grep -q`'s and `-l`'s end: a line selected (status 0). */
const selectsOne: Ends = async (result) => result.exitCode === 0;

/** `grep -m N`'s end: N lines selected (one line of output each). */
const selects =
  (max: number): Ends =>
  async (result) =>
    result.stdout.split('\n').length - 1 >= max;

/**
 * The programs whose stdin, when they ask for it, is read here from the terminal, and how. Each
 * asks for its stdin only when it reads it (no file operand, or `-`); a program that asks for it
 * otherwise (`cp` for its `-i` answers, `tty` to tell whether it is a terminal) is not listed, nor
 * one that reads the terminal in a way of its own (`sh`, `bc`, `ed`: their prompts); just-bash's
 * `base64` reads its stdin whatever its operands, so its file operand is looked at here.
 */
const readings: ReadonlyMap<string, Reading> = new Map([
  ['cat', 'lines'],
  ['tac', 'end'],
  ['head', 'lines'],
  ['tail', 'end'],
  ['wc', 'end'],
  ['sort', 'end'],
  ['uniq', 'group'],
  ['od', 'rows'],
  ['md5sum', 'end'],
  ['sha1sum', 'end'],
  ['sha256sum', 'end'],
  ['sha512sum', 'end'],
  ['nl', 'lines'],
  ['rev', 'lines'],
  ['tee', 'lines'],
  ['tr', 'lines'],
  ['cut', 'lines'],
  ['fold', 'lines'],
  ['grep', 'lines'],
  ['sed', 'behind'],
  ['awk', 'lines'],
  ['xargs', 'end'],
  ['base64', 'buffer'],
]);

/**
 * Of those, the ones that write each line as they read it with no buffer of their own, so that when
 * Ctrl-C kills them what they read is written, wherever their output goes (`cat > /tmp/f` then
 * Ctrl-C keeps the lines ended with Enter); the others die of it with what they held unwritten
 * (`wc -l > /tmp/n` leaves the file empty).
 */
const passing = new Set(['cat', 'tee']);

/** Whether PROG (a name or a path) reads the terminal when its stdin is one and it asks for it. */
export const readsTerminal = (program: string): boolean => readings.has(basename(program));

/** Where the first operand is that is not an option (nor an option's value, for `valued` options): a program's script or pattern. */
function programOperand(args: readonly string[], valued: string): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return i + 1 < args.length ? i + 1 : undefined;
    if (!arg.startsWith('-') || arg === '-') return i;
    if (valued.includes(arg.at(-1)!) && arg.length === 2) i++;
  }
  return undefined;
}

/** The first operand that is not an option (nor an option's value, for `valued` options), as a program's script or pattern. */
function firstOperand(args: readonly string[], valued: string): string | undefined {
  const at = programOperand(args, valued);
  return at === undefined ? undefined : args[at];
}

/** The whole number an option takes (`-X N` or `-XN`, X being `letter`, or `LONG=N`), if given so. */
function optionNumber(args: readonly string[], letter: string, long: string): number | undefined {
  const i = args.findIndex((arg) => arg.startsWith(`-${letter}`) || arg.startsWith(`${long}=`));
  if (i < 0) return undefined;
  const arg = args[i]!;
  const value = arg === `-${letter}` ? args[i + 1] : arg.startsWith(long) ? arg.slice(long.length + 1) : arg.slice(2);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** Whether a short option cluster or a long option among `args` is one of `letters` or `long`. */
const hasOption = (args: readonly string[], letters: RegExp, long: RegExp): boolean =>
  args.some((arg) => (arg.startsWith('--') ? long.test(arg) : arg.startsWith('-') && letters.test(arg.slice(1))));

/**
 * How PROG ARGS reads the terminal, or undefined when it does not. Where what the arguments ask for
 * needs the whole input (`grep -c`, an awk program with an END block, a sed script that looks for
 * the last line) or would repeat its effects when run again on more lines (`tee -a`, awk's own
 * output), it reads to the end.
 */
function readingOf(program: string, args: readonly string[]): HowItReads | undefined {
  const reading = readings.get(program);
  if (reading === undefined) return undefined;
  const whole = { reading: 'end' } as const;
  switch (program) {
    case 'head':
      return { reading, ends: headEnds };
    case 'grep': {
      if (hasOption(args, /[cL]/, /^--(count|files-without)/)) return whole;
      if (hasOption(args, /[lq]/, /^--(files-with|quiet|silent)/)) return { reading, ends: selectsOne };
      if (!hasOption(args, /m/, /^--max-count/)) return { reading };
      // At most N selected lines, when each is one line of output (no -o, no context lines).
      const max = optionNumber(args, 'm', '--max-count');
      return max === undefined || hasOption(args, /[oABCz]/, /^--(only|after|before|context|null)/) ? whole : { reading, ends: selects(max) };
    }
    case 'xargs': {
      const options = args.slice(0, programOperand(args, 'nsPEdIa') ?? args.length);
      // Its arguments from a file (-a) leave the terminal to the command it runs.
      if (hasOption(options, /a/, /^--arg-file/)) return undefined;
      // NUL-separated items (-0), a stop word (-E) or a size bound (-s) are read to Ctrl-D here.
      if (hasOption(options, /[0Es]/, /^--(null|eof|max-chars)/)) return { reading };
      if (hasOption(options, /I/, /^--replace/)) return { reading, batches: lineBatches };
      const max = optionNumber(options, 'n', '--max-args');
      return max !== undefined && max > 0 ? { reading, batches: argumentBatches(max) } : { reading };
    }
    case 'base64': {
      const file = firstOperand(args, 'w');
      if (file !== undefined && file !== '-') return undefined;
      // Decoding writes what each line decodes to as it is typed, and ends at the first Ctrl-D.
      return hasOption(args, /d/, /^--decode/) ? { reading: 'lines' } : { reading };
    }
    case 'tee':
      return hasOption(args, /a/, /^--append/) ? whole : { reading };
    case 'od':
      // Rows of another width, bytes skipped or counted, or no offset to end the output.
      return hasOption(args, /[wjNA]/, /^--(width|skip|read|address)/) ? whole : { reading };
    case 'uniq':
      // Lines compared other than whole (fields or characters skipped, case ignored) or not lines.
      return hasOption(args, /[fswiz]/, /^--(skip|check|ignore|zero)/) ? whole : { reading };
    case 'awk': {
      const script = hasOption(args, /^f/, /^--file/) ? undefined : firstOperand(args, 'Fvf');
      if (script === undefined || /END|[>|]|system|getline/.test(script)) return whole;
      return /\bexit\b/.test(script) ? { reading, ends: awkExits } : { reading };
    }
    case 'sed': {
      const scripts = args.flatMap((arg, i) => (args[i - 1] === '-e' ? [arg] : arg.startsWith('-e') && arg.length > 2 ? [arg.slice(2)] : []));
      if (hasOption(args, /^[^e]*f/, /^--file/)) return whole;
      const script = scripts.length ? scripts.join('\n') : firstOperand(args, 'ef');
      if (script === undefined || /[$N]/.test(script)) return whole;
      return /[qQ]/.test(script) ? { reading, ends: sedQuits } : { reading };
    }
    default:
      return { reading };
  }
}

/** `xargs -I`'s batches: a line each (its items are lines). */
const lineBatches = (typed: string): number => typed.lastIndexOf('\n') + 1;

/**
 * `xargs -n N`'s batches: N arguments each, an argument whole once the blank after it is typed
 * (busybox's words: blanks and newlines separate them, a quote runs to its match, a backslash takes
 * the character after it).
 */
function argumentBatches(max: number): (typed: string) => number {
  return (typed) => {
    let count = 0;
    let end = 0;
    let inWord = false;
    let quote = '';
    for (let i = 0; i < typed.length; i++) {
      const c = typed[i]!;
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '\\') {
        i++;
        inWord = true;
      } else if (c === '"' || c === "'") {
        quote = c;
        inWord = true;
      } else if (c === ' ' || c === '\t' || c === '\n') {
        if (inWord && ++count % max === 0) end = i + 1;
        inWord = false;
      } else inWord = true;
    }
    return end;
  };
}

/** What the patched shell gives the question (patches/README.md 46): the terminal, and the program run again on what was typed. */
export interface TerminalReading {
  /** The next piece typed: a line with its newline, what is typed before Ctrl-D, '' at Ctrl-D on an empty line, undefined at Ctrl-C. */
  line(): Promise<string | undefined>;
  /** The program run again with TEXT (not empty) as its stdin. */
  run(text: string): Promise<ExecResult>;
  /** Writes the result's stdout to the terminal now; false (and nothing written) when the program's stdout is not the terminal. */
  show(result: ExecResult): boolean;
  /** Ends the line as Ctrl-C does. */
  interrupt(): never;
  /** Ends the line as Ctrl-C does once the program's result has gone where its output goes. */
  interruptAfter(): void;
}

/** The name the patched shell asks (patches/README.md 46): whether and how a program that read a terminal's stdin reads it. */
export const terminalStdinProgram = '__reflex_terminal_stdin';

/** The name the patched shell asks (patches/README.md 111): whether a program that asked for its stdin read it, so the rest is gone for the commands after it. */
export const groupStdinProgram = '__reflex_group_stdin';

/**
 * The shell's question (`__reflex_group_stdin PROG ARGS…`, asked after PROG asked for the stdin of
 * the loop, group or shell it runs in): status 0 when PROG read it, as busybox's programs that read
 * their stdin do (a pipe's or a small file's bytes all at once, so nothing is left for the next
 * command: `printf 'a\nb\n' | { head -n 1; cat; }` prints `a`), 1 when it asked for it without
 * reading it (`cp` for its `-i` answers, `base64 FILE`).
 */
export function groupStdinCommand(): Command {
  return {
    name: groupStdinProgram,
    async execute(args) {
      return { stdout: '', stderr: '', exitCode: readingOf(basename(args[0] ?? ''), args.slice(1)) ? 0 : 1 };
    },
  };
}

/** The answer that lets the program's first run, on an empty stdin, stand. */
const firstStands: ExecResult = { stdout: '', stderr: '', exitCode: -1 };

/**
 * The shell's question (`__reflex_terminal_stdin PROG ARGS…`, asked after PROG read its stdin, the
 * terminal, as empty, with the terminal as `jbTerminal`): reads what is typed as PROG would, and
 * answers PROG's result (what it wrote as it read is already on the terminal), or status -1 when
 * the empty stdin it read stands (PROG does not read a terminal, or Ctrl-D came first).
 */
export function terminalStdinCommand(): Command {
  return {
    name: terminalStdinProgram,
    async execute(args, ctx) {
      const terminal = (ctx as { jbTerminal?: TerminalReading }).jbTerminal;
      const program = basename(args[0] ?? '');
      const how = readingOf(program, args.slice(1));
      if (!terminal || !how) return firstStands;
      return how.batches ? readBatches(terminal, how.batches) : readTerminal(terminal, how, passing.has(program));
    },
  };
}

/**
 * The result with this stdout and stderr, and without the patched shell's log of the order its
 * writes came in (`jbLog`, patches/README.md 34), which was of the whole output.
 */
const stdoutOnly = (result: ExecResult, stdout: string, stderr: string): ExecResult =>
  ({ ...result, stdout, stderr, jbLog: undefined }) as ExecResult;

/** The lines typed but the last and those equal to it just before: the runs `uniq` has seen end. */
function withoutLastRun(text: string): string {
  const lines = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
  let end = lines.length - 1;
  while (end > 0 && lines[end - 1] === lines[end]) end--;
  return lines
    .slice(0, end)
    .map((line) => `${line}\n`)
    .join('');
}

/** The bytes in a row of `od`'s output. */
const rowBytes = 16;

/** What was typed up to the end of its last whole row of {@link rowBytes} bytes (UTF-8), a character a row's end cuts left for the next. */
function wholeRows(text: string): string {
  const rows = Math.floor(Buffer.byteLength(text, 'utf8') / rowBytes) * rowBytes;
  let bytes = 0;
  let end = 0;
  for (const c of text) {
    const size = Buffer.byteLength(c, 'utf8');
    if (bytes + size > rows) break;
    bytes += size;
    end += c.length;
  }
  return text.slice(0, end);
}

/** Output without its last line: `od`'s offset after the input, which more input moves. */
function withoutLastLine(output: string): string {
  const cut = output.lastIndexOf('\n', output.length - 2);
  return output.slice(0, cut + 1);
}

/**
 * What a program is run on as lines come, by how it reads (`text`: all typed so far, `before`: that
 * without the last line), and what of that run's output stands.
 */
const soFar: Record<Reading, { input(text: string, before: string): string; output?(stdout: string): string }> = {
  end: { input: (text) => text },
  lines: { input: (text) => text },
  behind: { input: (_, before) => before },
  group: { input: withoutLastRun },
  rows: { input: wholeRows, output: withoutLastLine },
  buffer: { input: (text) => text },
};

/** The length of the longest common start of two strings. */
function commonStart(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * Reads the terminal as a program that reads it so (`how`), running it again on what is typed so
 * far as each line comes (its output on more lines starts with its output on fewer, for the
 * programs and arguments that read so), writing what is new of its output when its stdout is the
 * terminal, and ending where it has what it wants. `keeps`: its output so far is written when
 * Ctrl-C kills it, wherever it goes.
 */
async function readTerminal(terminal: TerminalReading, { reading, ends }: HowItReads, keeps: boolean): Promise<ExecResult> {
  let text = '';
  let shown = '';
  let showing = reading !== 'end' && reading !== 'buffer';
  /** For a `buffer` reader: whether something was typed since the last Ctrl-D (its read of the buffer goes on after it). */
  let filling = false;
  /** What the last run on a line was given (a line that adds no row of `od`'s or run of `uniq`'s gives the same). */
  let ranOn = '';
  const rest = (result: ExecResult): ExecResult =>
    shown === '' ? result : stdoutOnly(result, result.stdout.slice(commonStart(shown, result.stdout)), result.stderr);
  for (;;) {
    const piece = await terminal.line();
    if (piece === undefined) {
      if (!keeps || text === '' || shown !== '') terminal.interrupt();
      terminal.interruptAfter();
      return terminal.run(text);
    }
    if (piece === '' && !(reading === 'buffer' && filling)) break;
    filling = piece !== '';
    if (piece === '') continue;
    const before = text;
    text += piece;
    const upTo = soFar[reading].input(text, before);
    if ((showing || ends) && upTo !== '' && upTo !== ranOn) {
      ranOn = upTo;
      const result = await terminal.run(upTo);
      const output = soFar[reading].output?.(result.stdout) ?? result.stdout;
      const fresh = showing && output.startsWith(shown) ? output.slice(shown.length) : '';
      if (fresh !== '') {
        showing = terminal.show(stdoutOnly(result, fresh, ''));
        if (showing) shown += fresh;
      }
      // `upTo` is all typed for a program that ends (it reads by lines).
      if (ends && (await ends(result, text, (more) => terminal.run(more)))) return rest(result);
    }
  }
  return text === '' ? firstStands : rest(await terminal.run(text));
}

/** Two results of a program's runs one after the other, as one (the order of their writes not kept across them). */
const joined = (first: ExecResult | undefined, next: ExecResult): ExecResult =>
  first ? stdoutOnly(next, first.stdout + next.stdout, first.stderr + next.stderr) : next;

/**
 * Reads the terminal as a program that runs its command on each batch of its input once the batch
 * is whole (`batches`: where the last whole one ends in what was typed): each batch is run once,
 * on its own, its output written as it ends when the program's stdout is the terminal (held to its
 * end otherwise), and what is left is run at Ctrl-D. Its status is busybox xargs's: 123 when a
 * command failed; a status from 124 (a command that exited 255, was killed, or could not be run)
 * ends it at once, the lines typed after it going to the shell.
 */
async function readBatches(terminal: TerminalReading, batches: (typed: string) => number): Promise<ExecResult> {
  let typed = '';
  let done = 0;
  let showing = true;
  /** What ran and was not written to the terminal (the program's stdout is not the terminal). */
  let held: ExecResult | undefined;
  let failed = false;
  const status = (result: ExecResult): ExecResult => ({ ...result, exitCode: result.exitCode === 0 && failed ? 123 : result.exitCode });
  for (;;) {
    const piece = await terminal.line();
    if (piece === undefined) {
      // Ctrl-C: what ran stands, and goes where its output goes.
      if (!held) terminal.interrupt();
      terminal.interruptAfter();
      return held!;
    }
    if (piece === '') break;
    typed += piece;
    const end = batches(typed);
    if (end <= done) continue;
    const result = await terminal.run(typed.slice(done, end));
    done = end;
    if (showing) showing = terminal.show(result);
    const written = showing ? undefined : result;
    if (result.exitCode >= 124) return status(written ? joined(held, written) : stdoutOnly(result, '', ''));
    if (written) held = joined(held, written);
    failed ||= result.exitCode !== 0;
  }
  if (done === 0) return typed === '' ? firstStands : terminal.run(typed);
  const rest = typed.slice(done);
  const last = /\S/.test(rest) ? await terminal.run(rest) : { stdout: '', stderr: '', exitCode: 0 };
  return status(joined(held, last));
}
