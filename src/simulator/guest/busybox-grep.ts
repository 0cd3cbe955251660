import type { Command, CommandContext, ExecResult } from 'just-bash';
import { Files } from './busybox-file-calls.js';
import { banner } from './busybox-getopt.js';
import { openFailure } from './busybox-reads.js';
import { orderOf, ProgramOutput } from './program-output.js';

/** grep's options that take a value (busybox's getopt32 string `e:*f:*A:B:C:m:`). */
const valued = 'efABCm';

/** Every letter busybox 1.35's grep takes (`-a` and `-I` taken and ignored; no `-P`, `-V` …). */
const grepLetters = `HhnlLoqvsrRiwFEzcxaI${valued}`;

/** busybox 1.35's grep usage, as it prints it after an option it does not take. */
const grepUsage = [
  'Usage: grep [-HhnlLoqvsrRiwFEz] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...',
  '',
  'Search for PATTERN in FILEs (or stdin)',
  '',
  "\t-H\tAdd 'filename:' prefix",
  "\t-h\tDo not add 'filename:' prefix",
  "\t-n\tAdd 'line_no:' prefix",
  '\t-l\tShow only names of files that match',
  "\t-L\tShow only names of files that don't match",
  '\t-c\tShow only count of matching lines',
  '\t-o\tShow only the matching part of line',
  '\t-q\tQuiet. Return 0 if PATTERN is found, 1 otherwise',
  '\t-v\tSelect non-matching lines',
  '\t-s\tSuppress open and read errors',
  '\t-r\tRecurse',
  '\t-R\tRecurse and dereference symlinks',
  '\t-i\tIgnore case',
  '\t-w\tMatch whole words only',
  '\t-x\tMatch whole lines only',
  '\t-F\tPATTERN is a literal (not regexp)',
  '\t-E\tPATTERN is an extended regexp',
  '\t-z\tNUL terminated input',
  '\t-m N\tMatch up to N times per file',
  '\t-A N\tPrint N lines of trailing context',
  '\t-B N\tPrint N lines of leading context',
  "\t-C N\tSame as '-A N -B N'",
  '\t-e PTRN\tPattern to match',
  '\t-f FILE\tRead pattern from file',
  '',
].join('\n');

/** The command line as busybox reads it: option words, the pattern operand (without -e/-f), the files, and the letters given. */
function grepLine(args: string[]): { options: string[]; pattern?: string; files: string[]; letters: Set<string> } {
  const options: string[] = [];
  const operands: string[] = [];
  const letters = new Set<string>();
  let patterned = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--') {
      operands.push(...args.slice(k + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-' || a.startsWith('--')) {
      if (a.startsWith('--') && a !== '--') options.push(a);
      else operands.push(a);
      continue;
    }
    let word = '-';
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      letters.add(c);
      if (valued.includes(c)) {
        if (c === 'e' || c === 'f') patterned = true;
        const value = j + 1 < a.length ? a.slice(j + 1) : args[++k];
        if (word !== '-') options.push(word);
        options.push(`-${c}`, value ?? '');
        word = '-';
        break;
      }
      // -s (no messages for files) and -H (names always) are busybox's, not just-bash's: done here;
      // -a and -I it takes and ignores.
      if (!'sHaI'.includes(c)) word += c;
    }
    if (word !== '-') options.push(word);
  }
  const pattern = patterned ? undefined : operands.shift();
  return { options, pattern, files: operands, letters };
}

/**
 * just-bash's grep's command line for these options and files, with the line's pattern operand: each
 * option a word of its own (just-bash takes no value glued to a letter after others, `-oB1`), and
 * `--` before the operands (a pattern or file that starts with `-`).
 */
const argvOf = (line: ReturnType<typeof grepLine>, options: readonly string[], files: readonly string[]): string[] => [
  ...options,
  '--',
  ...(line.pattern === undefined ? [] : [line.pattern]),
  ...files,
];

/**
 * The first and last line (from 0) a run printed with context (`-A`, `-B`, `-C`), as the bundle's
 * grep returns them. busybox keeps the last across files and prints `--` before a file's first
 * line unless that line's number follows it.
 */
type Span = [number, number];

/** A companion operand that gives a run of one file its name on each line, and nothing of its own. */
const quiet = '/dev/null';

/**
 * busybox's grep over its operands (findutils/grep.c): each in turn, one that does not open said
 * (`grep: F: why`; none under `-s`) and the next read, status 2 once one failed (0 under `-q`
 * once a line matched: it stops there); a directory without `-r` reads as empty; under `-r` the
 * files found under `.` are named `./F`; `-H` names every file. just-bash's grep reads each operand
 * that opens; its own messages (the `-r` walk's) are kept.
 */
export function grepCommand(): Command {
  return {
    name: 'grep',
    async execute(args, ctx) {
      if (!ctx.origCommand) return { stdout: '', stderr: 'sh: grep: not found\n', exitCode: 127 };
      const line = grepLine(args);
      const { letters } = line;
      const refused = [...letters].find((c) => !grepLetters.includes(c));
      if (refused !== undefined) return { stdout: '', stderr: `grep: invalid option -- '${refused}'\n${banner}${grepUsage}`, exitCode: 2 };
      if ((letters.has('l') || letters.has('L')) && line.files.every((f) => f === '-')) {
        return namingStdin(await ctx.origCommand(argvOf(line, [...withoutNaming(line.options), '-m', '1'], line.files)), letters);
      }
      const recursive = letters.has('r') || letters.has('R');
      const failures = await Promise.all(line.files.map((f) => (f === '-' ? undefined : openFailure(ctx.fs, ctx.cwd, f))));
      const kinds = await Promise.all(line.files.map((f) => (f === '-' ? undefined : new Files(ctx.fs, ctx.cwd).stat(f))));
      // Under -r a file operand alone is not named (busybox names the files it finds in a directory).
      const special = failures.some(Boolean) || kinds.some((k) => k?.kind === 'directory') || letters.has('s') || letters.has('H') || recursive;
      if (!special || line.files.length === 0) return ctx.origCommand(argvOf(line, line.options, line.files));
      let named = (line.files.length > 1 || letters.has('H')) && !letters.has('h');
      const o = new ProgramOutput();
      let failed = false;
      let matched = false;
      let lastPrinted: number | undefined;
      for (const [i, f] of line.files.entries()) {
        if (failures[i]) {
          if (!letters.has('s')) o.err(`grep: ${f}: ${failures[i]}\n`);
          failed = true;
          continue;
        }
        const directory = kinds[i]?.kind === 'directory';
        if (directory && !recursive) continue;
        if (directory && !letters.has('h')) named = true;
        if (directory && !(await hasFiles(ctx, f))) continue;
        const result = await runOne(ctx, line, f, named && !directory, !directory && !named);
        // grep died (a pattern it could not compile): what it wrote first, its message, and no more files.
        const died = result.exitCode === 2 && !/^grep: .*: (Permission denied|No such file or directory)$/m.test(result.stderr);
        const span = (result as { jbSpan?: Span }).jbSpan;
        if (span && lastPrinted !== undefined && lastPrinted !== span[0] - 1) o.out('--\n');
        if (span) lastPrinted = span[1];
        for (const [fd, text, raw] of orderOf(result)) {
          if (fd === 1 && raw) o.bytes(Buffer.from(text, 'latin1'));
          else if (fd === 1) o.out(text);
          else if (died || !letters.has('s')) o.err(text);
        }
        if (died) return o.result(2);
        failed ||= result.exitCode === 2;
        if (result.exitCode === 0) matched = true;
        if (matched && letters.has('q')) return o.result(0);
      }
      return o.result(failed ? 2 : matched ? 0 : 1);
    },
  };
}

/** Option words without `-l` and `-L` (a valued option's value kept as it is). */
function withoutNaming(options: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const word = options[i]!;
    if (word.length === 2 && valued.includes(word[1]!)) kept.push(word, options[++i]!);
    else if (word.startsWith('--')) kept.push(word);
    else if (word.replace(/[lL]/g, '') !== '-') kept.push(word.replace(/[lL]/g, ''));
  }
  return kept;
}

/**
 * `-l` or `-L` over stdin, from its run without them and with `-m 1` (busybox reads no further
 * once a line is selected): busybox names stdin `(standard input)` when
 * it has (`-l`) or has not (`-L`) a line selected, status 0, else writes nothing, status 1 (`-q`
 * writes nothing either way); just-bash's grep writes the lines it selects instead.
 */
function namingStdin(result: ExecResult, letters: Set<string>): ExecResult {
  if (result.exitCode === 2) return result;
  const named = letters.has('L') ? result.exitCode !== 0 : result.exitCode === 0;
  return { stdout: named && !letters.has('q') ? '(standard input)\n' : '', stderr: result.stderr, exitCode: named ? 0 : 1 };
}

/** Whether a directory holds a file anywhere under it (just-bash's `grep -r` fails on one that holds none). */
async function hasFiles(ctx: CommandContext, dir: string): Promise<boolean> {
  const path = ctx.fs.resolvePath(ctx.cwd, dir);
  const names = await ctx.fs.readdir(path).catch(() => [] as string[]);
  for (const name of names) {
    const stat = await ctx.fs.stat(`${path === '/' ? '' : path}/${name}`).catch(() => undefined);
    if (!stat?.isDirectory) return true;
    if (await hasFiles(ctx, `${path === '/' ? '' : path}/${name}`)) return true;
  }
  return false;
}

/** just-bash's grep over one operand; the files found under `.` named `./F`, as busybox joins them (just-bash: `F`). */
async function runOne(ctx: CommandContext, line: ReturnType<typeof grepLine>, f: string, named: boolean, unnamed = false): Promise<ExecResult> {
  const dot = f === '.' && !line.letters.has('h');
  // A file grep is not to name (one operand, under -r too: just-bash's grep -r names it): -h.
  const argv = argvOf(line, unnamed ? [...line.options, '-h'] : line.options, [f, ...(named ? [quiet] : [])]);
  const result = await ctx.origCommand!(argv);
  const rename = (text: string, fd: 1 | 2): string => {
    let out = text;
    if (named) out = out.replace(/^\/dev\/null(?:[:-].*)?\n/gm, '');
    if (dot && fd === 1) out = out.replace(/^(?!--$)(?=.)/gm, './');
    if (dot && fd === 2) out = out.replace(/^grep: (?!\/)/gm, 'grep: ./');
    return out;
  };
  // just-bash's walk says a file it may not read is missing: open(2) says why.
  const why = async (text: string): Promise<string> => {
    let out = '';
    for (const l of text.split(/(?<=\n)/)) {
      const m = /^grep: (.*): No such file or directory(\n?)$/.exec(l);
      out += m ? `grep: ${m[1]}: ${(await openFailure(ctx.fs, ctx.cwd, m[1]!)) ?? 'No such file or directory'}${m[2]}` : l;
    }
    return out;
  };
  const parts = await Promise.all(
    orderOf(result).map(async ([fd, text, raw]) => [fd, fd === 2 ? await why(rename(text, fd)) : rename(text, fd), raw] as const),
  );
  const stdout = parts
    .filter((p) => p[0] === 1)
    .map((p) => p[1])
    .join('');
  const stderr = parts
    .filter((p) => p[0] === 2)
    .map((p) => p[1])
    .join('');
  return { ...result, stdout, stderr, jbLog: parts.map((p) => [...p]) } as ExecResult;
}
