import type { Command, ExecResult } from 'just-bash';
import { getopt, helpAsked, isResult } from './busybox-getopt.js';

/** A busybox program's command line: its flags, the options that take a value, those values that must be numbers, and its usage. */
interface OptionLine {
  flags: string;
  valued: string;
  numbers: string;
  usage: string;
  /** What busybox's program writes otherwise than just-bash's, from just-bash's stdout and the options given. */
  reword?: (stdout: string, opts: Map<string, string | true>) => string;
}

/** nl's line that it does not number: busybox writes the width and the separator as spaces (just-bash writes the separator). */
function unnumbered(stdout: string, opts: Map<string, string | true>): string {
  const width = Number(opts.get('w') ?? 6);
  const sep = String(opts.get('s') ?? '\t');
  const blank = `${' '.repeat(width)}${sep}`;
  return stdout
    .split('\n')
    .map((l) => (l.startsWith(blank) ? `${' '.repeat(width + sep.length)}${l.slice(blank.length)}` : l))
    .join('\n');
}

/**
 * The command lines of the busybox programs whose work just-bash's programs do as busybox's do, but
 * whose options they read otherwise (one a word, GNU's long names, options busybox lacks): recorded
 * on the beds (busybox 1.35's usages).
 */
const optionLines: Record<string, OptionLine> = {
  seq: {
    flags: 'w',
    valued: 's',
    numbers: '',
    usage:
      'Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n\nPrint numbers from FIRST to LAST, in steps of INC.\nFIRST, INC default to 1.\n\n' +
      '\t-w\tPad to last with leading zeros\n\t-s SEP\tString separator\n',
  },
  nl: {
    flags: '',
    valued: 'bisvw',
    numbers: 'ivw',
    usage:
      'Usage: nl [OPTIONS] [FILE]...\n\nWrite FILEs to standard output with line numbers added\n\n' +
      '\t-b STYLE\tWhich lines to number - a: all, t: nonempty, n: none\n\t-i N\t\tLine number increment\n' +
      '\t-s STRING\tUse STRING as line number separator\n\t-v N\t\tStart from N\n\t-w N\t\tWidth of line numbers\n',
    reword: unnumbered,
  },
  expand: {
    flags: 'i',
    valued: 't',
    numbers: 't',
    usage:
      "Usage: expand [-i] [-t N] [FILE]...\n\nConvert tabs to spaces, writing to stdout\n\n\t-i\tDon't convert tabs after non blanks\n\t-t\tTabstops every N chars\n",
  },
  unexpand: {
    flags: 'af',
    valued: 't',
    numbers: 't',
    usage:
      'Usage: unexpand [-fa][-t N] [FILE]...\n\nConvert spaces to tabs, writing to stdout\n\n\t-a\tConvert all blanks\n\t-f\tConvert only leading blanks\n' +
      '\t-t N\tTabstops every N chars\n',
  },
  rev: { flags: '', valued: '', numbers: '', usage: 'Usage: rev [FILE]...\n\nReverse lines of FILE\n' },
  fold: {
    flags: 'bs',
    valued: 'w',
    numbers: 'w',
    usage:
      'Usage: fold [-bs] [-w WIDTH] [FILE]...\n\nWrap input lines in FILEs (or stdin), writing to stdout\n\n' +
      '\t-b\tCount bytes rather than columns\n\t-s\tBreak at spaces\n\t-w\tUse WIDTH columns instead of 80\n',
  },
};

/**
 * `seq`, `nl`, `expand`, `unexpand`, `fold` and `rev` with their command lines read as busybox's getopt32
 * reads them (options clustered in one word, `-tN` glued, operands among them, no long names, its
 * messages and usage, `invalid number` for a count that is not one), then run by just-bash's
 * program given each option a word. seq's options end at its first negative number (`seq -w -3 1`).
 */
export function busyboxOptionLines(): Command[] {
  return Object.entries(optionLines).map(([name, line]) => ({
    name,
    async execute(args, ctx): Promise<ExecResult> {
      if (!ctx.origCommand) return { stdout: '', stderr: `sh: ${name}: not found\n`, exitCode: 127 };
      const help = helpAsked(args, line.usage);
      if (help) return help;
      const end = name === 'seq' ? args.findIndex((a) => /^-\.?\d/.test(a)) : -1;
      const parsed = getopt(name, line.usage, end < 0 ? args : args.slice(0, end), line.flags, line.valued);
      if (isResult(parsed)) return parsed;
      const words: string[] = [];
      for (const [letter, value] of parsed.opts) {
        if (value === true) {
          words.push(`-${letter}`);
          continue;
        }
        if (line.numbers.includes(letter) && !/^\d+$/.test(value)) return { stdout: '', stderr: `${name}: invalid number '${value}'\n`, exitCode: 1 };
        words.push(`-${letter}`, value);
      }
      const result = await ctx.origCommand([...words, ...parsed.operands, ...(end < 0 ? [] : args.slice(end))]);
      return line.reword ? { ...result, stdout: line.reword(result.stdout, parsed.opts) } : result;
    },
  }));
}
