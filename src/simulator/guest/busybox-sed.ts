import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner } from './busybox-getopt.js';
import { isDirectory, openFailure } from './busybox-reads.js';
import type { ProgramHost } from './program-host.js';
import { orderOf, ProgramOutput } from './program-output.js';

/** sed's command line as busybox's getopt32 reads it: options in order (with their values), the script operand, the files. */
interface SedLine {
  options: string[];
  /** The first operand when no -e or -f gave the script. */
  script?: string;
  files: string[];
  inPlace: boolean;
  /** Whether -e or -f gave the script. */
  scripted: boolean;
  /** An option letter that needs a value and has none. */
  missing?: string;
  /** Whether an option is one busybox's sed does not know (just-bash's refusal says so). */
  unknown: boolean;
}

function sedLine(args: string[]): SedLine {
  const line: SedLine = { options: [], files: [], inPlace: false, scripted: false, unknown: false };
  const operands: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--') {
      operands.push(...args.slice(k + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      operands.push(a);
      continue;
    }
    line.options.push(a);
    if (
      a.startsWith('--')
        ? !/^--(in-place(=.*)?|regexp-extended|quiet|silent|expression(=.*)?|file(=.*)?)$/.test(a)
        : !/^-[rEn]*(i.*|[ef].*)?$/.test(a)
    )
      line.unknown = true;
    if (a === '--expression' || a === '--file' || /^-[rEn]*[ef]$/.test(a)) {
      line.scripted = true;
      if (k + 1 < args.length) line.options.push(args[++k]!);
      else if (!a.startsWith('--')) line.missing = a.at(-1);
    } else if (/^-[rEn]*[ef]/.test(a) || /^--(expression|file)=/.test(a)) line.scripted = true;
    if (/^-[a-zA-Z]*i/.test(a) && !/^-[a-zA-Z]*[ef]/.test(a.slice(0, a.indexOf('i')))) line.inPlace = true;
    if (a.startsWith('--in-place')) line.inPlace = true;
  }
  if (!line.scripted && operands.length) line.script = operands.shift();
  line.files = operands;
  return line;
}

/** The number of lines sed reads from `data` (the last may lack its newline). */
const linesIn = (data: Buffer): number => {
  let n = 0;
  for (let at = data.indexOf(10); at >= 0; at = data.indexOf(10, at + 1)) n++;
  return data.length && data[data.length - 1] !== 10 ? n + 1 : n;
};

/** What `sed` says of an operand, at the line where it reaches it. */
interface Note {
  /** Lines read before the operand: busybox says it when reading ahead past line `after` (0: at the start). */
  after: number;
  message: string;
}

/** A line the probing run writes when it reaches a line, which no script writes by chance. */
const reached = '\u0001jb-sed-reached\u0001';

/**
 * just-bash's `sed` under busybox's reading of its operands (editors/sed.c): the files are one
 * stream, and one that does not open is said (`sed: F: why`, status 1) when sed reaches it and the
 * rest read; a directory reads as empty. sed reads a line ahead (for `$`), so it reaches an operand
 * when the line before it becomes the current one: the message comes after the output of the
 * lines before that one, and never if the script quits first. just-bash's sed runs on the files
 * that open; where a message goes is found by a second run that stops as that line becomes current.
 * With `-i`, busybox writes the result to a new file and renames it over the name, so that name
 * alone changes and stops being a link of the others (just-bash writes into the file, which every
 * name shows).
 */
export function sedCommand(host: ProgramHost): Command {
  return {
    name: 'sed',
    async execute(args, ctx) {
      if (!ctx.origCommand) return { stdout: '', stderr: 'sh: sed: not found\n', exitCode: 127 };
      const run = ctx.origCommand;
      const line = sedLine(args);
      // getopt32's refusals come first, with the usage: an option without its value, then no script at all.
      if (line.missing) return { stdout: '', stderr: `sed: option requires an argument -- '${line.missing}'\n${banner}${sedUsage}`, exitCode: 1 };
      if (!line.scripted && line.script === undefined && !line.unknown) return { stdout: '', stderr: `${banner}${sedUsage}`, exitCode: 1 };
      // busybox runs the files up to a `-` (stdin) as one stream, then the rest as another: line
      // numbers and `$` start again after it.
      const segments: Segment[] = [];
      let segment: Segment = { files: [], notes: [] };
      let dropped = false;
      for (const f of line.files) {
        if (f === '-') {
          segment.files.push(f);
          segments.push(segment);
          segment = { files: [], notes: [] };
          continue;
        }
        const why = await openFailure(ctx.fs, ctx.cwd, f);
        if (why) {
          // The files before it are read only now, to count their lines: a command line whose
          // operands all open runs as it is.
          let after = 0;
          for (const g of segment.files) after += linesIn(Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, g))));
          segment.notes.push({ after, message: `sed: ${f}: ${why}\n` });
        } else if (!(await isDirectory(ctx.fs, ctx.cwd, f))) {
          segment.files.push(f);
          if (line.inPlace) await host.fs.separate(posix.resolve(ctx.cwd, f));
        } else if (line.inPlace) segment.files.push(f);
        else dropped = true;
      }
      if (segment.files.length || segment.notes.length) segments.push(segment);
      const notes = segments.flatMap((g) => g.notes);
      if (!dropped && notes.length === 0 && segments.length <= 1) return endLine(ctx, line, line.files, fileMessage(await run(args)));
      const argv = (prefix: string[], operands: string[]): string[] => [
        ...prefix,
        ...line.options,
        ...(line.script === undefined ? [] : prefix.length ? ['-e', line.script] : [line.script]),
        ...operands,
      ];
      const files = segments.flatMap((g) => g.files);
      const said = notes.map((n) => n.message).join('');
      if (line.inPlace) {
        if (files.length === 0) return { stdout: '', stderr: said, exitCode: 1 };
        const result = fileMessage(await run(argv([], files)));
        return result.exitCode !== 0 && result.stderr !== ''
          ? result
          : { ...result, stderr: said + result.stderr, exitCode: said ? 1 : result.exitCode };
      }
      // No file opened: the script is still read (busybox refuses a bad one first) over an empty input.
      if (files.length === 0) {
        const result = fileMessage(await run(argv([], ['/dev/null'])));
        return result.exitCode !== 0 && result.stderr !== ''
          ? result
          : { ...result, stderr: said + result.stderr, exitCode: said ? 1 : result.exitCode };
      }
      const o = new ProgramOutput();
      let exitCode = 0;
      for (const g of segments) {
        if (g.files.length === 0) {
          for (const n of g.notes) o.err(n.message);
          exitCode = Math.max(exitCode, 1);
          continue;
        }
        const result = await endLine(ctx, line, g.files, fileMessage(await run(argv([], g.files))));
        if (result.exitCode !== 0 && result.stderr !== '') return result;
        exitCode = Math.max(exitCode, await placeNotes(run, argv, g.files, g.notes, result, o));
      }
      return o.result(exitCode);
    },
  };
}

/** A stretch of operands sed reads as one stream: the files that open, and what it says of the others. */
interface Segment {
  files: string[];
  notes: Note[];
}

/** Writes the run's output to `o` with each message where busybox writes it; its status (1 when a message was reached). */
async function placeNotes(
  run: (args: string[]) => Promise<ExecResult>,
  argv: (prefix: string[], operands: string[]) => string[],
  files: string[],
  notes: Note[],
  result: ExecResult,
  o: ProgramOutput,
): Promise<number> {
  let written = 0;
  let said = false;
  for (const note of notes) {
    let upTo = written;
    if (note.after > 0) {
      const probe = await run(argv(['-e', `${note.after}i ${reached}`, '-e', `${note.after}Q`], files));
      const at = probe.stdout.indexOf(`${reached}\n`);
      // Not reached: the script quit before that line (busybox never opens the operand).
      if (at < 0) continue;
      upTo = Math.max(written, at);
    }
    o.out(result.stdout.slice(written, upTo));
    written = upTo;
    o.err(note.message);
    said = true;
  }
  for (const [fd, text] of orderOf({ ...result, stdout: result.stdout.slice(written) })) {
    if (fd === 1) o.out(text);
    else o.err(text);
  }
  return said && result.exitCode === 0 ? 1 : result.exitCode;
}

/**
 * busybox's `p`, `=`, `i` and `a` end their line whatever the input's last line lacked; only the
 * pattern space printed at the end of a cycle (and `s///p`) leaves the newline off when the input
 * had none. just-bash leaves it off the output's end whatever wrote it: under -n without an `s`
 * command nothing prints the pattern space so, and the line is ended.
 */
async function endLine(ctx: CommandContext, line: SedLine, files: string[], result: ExecResult): Promise<ExecResult> {
  if (result.exitCode !== 0 || result.stdout === '' || result.stdout.endsWith('\n')) return result;
  const quiet = line.options.some((o) => /^-[rEn]*n[rEn]*$|^--(quiet|silent)$/.test(o));
  const scripts = [line.script ?? '', ...line.options.filter((_, i) => i > 0 && /^-[rEn]*e$|^--expression$/.test(line.options[i - 1]!))];
  if (!quiet || scripts.some((t) => /(^|[;{}\s\d$/!])s[^\w\s\\]/.test(t) || /(^|[;{}\s])w\s/.test(t))) return result;
  const last = files.at(-1) ?? '-';
  const data = last === '-' ? Buffer.from(String(ctx.stdin), 'latin1') : Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, last)));
  if (data.length === 0 || data[data.length - 1] === 10) return result;
  const o = new ProgramOutput();
  o.append(result);
  o.out('\n');
  return o.result(result.exitCode);
}

const sedUsage =
  'Usage: sed [-i[SFX]] [-nrE] [-f FILE]... [-e CMD]... [FILE]...\nor: sed [-i[SFX]] [-nrE] CMD [FILE]...\n\n' +
  '\t-e CMD\tAdd CMD to sed commands to be executed\n\t-f FILE\tAdd FILE contents to sed commands to be executed\n' +
  '\t-i[SFX]\tEdit files in-place (otherwise write to stdout)\n\t\tOptionally back files up, appending SFX\n' +
  '\t-n\tSuppress automatic printing of pattern space\n\t-r,-E\tUse extended regex syntax\n\n' +
  'If no -e or -f, the first non-option argument is the sed command string.\nRemaining arguments are input files (stdin if none).\n';

/**
 * just-bash's messages in busybox's words: a script file sed cannot open (`sed: F: why`; just-bash:
 * `couldn't open file F: why`), a label not found, an unknown command, a range without its end, and
 * a refused option followed by busybox's usage.
 */
function fileMessage(result: ExecResult): ExecResult {
  let stderr = result.stderr
    .replace(/^sed: couldn't open file (.*): ([^:\n]*)$/gm, 'sed: $1: $2')
    // Script errors busybox words otherwise (editors/sed.c), where the two say the same thing.
    .replace(/^sed: undefined label '(.*)'$/gm, "sed: can't find label for jump to '$1'")
    .replace(/^sed: invalid command: (.)$/gm, 'sed: unsupported command $1')
    .replace(/^sed: expected context address$/gm, 'sed: no address after comma');
  if (/^sed: (invalid option -- '.'|option requires an argument -- '.'|unrecognized option '.*')\n$/.test(stderr)) stderr += `${banner}${sedUsage}`;
  return stderr === result.stderr ? result : { ...result, stderr };
}
