import type { Command, ExecResult } from 'just-bash';
import { banner, getopt, helpAsked, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { bytesOutput } from './bytes-output.js';
import { writeToOption } from './guest-open.js';
import type { ProgramHost } from './program-host.js';

const usage =
  'Usage: uniq [-cduiz] [-f,s,w N] [FILE [OUTFILE]]\n\nDiscard duplicate lines\n\n' +
  '\t-c\tPrefix lines by the number of occurrences\n\t-d\tOnly print duplicate lines\n\t-u\tOnly print unique lines\n' +
  '\t-i\tIgnore case\n\t-z\tNUL terminated output\n\t-f N\tSkip first N fields\n' +
  '\t-s N\tSkip first N chars (after any skipped fields)\n\t-w N\tCompare N characters in line\n';

const die = (why: string): ExecResult => ({ stdout: '', stderr: `uniq: ${why}\n`, exitCode: 1 });

/** What of a line uniq compares: past `fields` fields (blanks, then what is not blank) and `chars` characters more. */
function compared(line: string, fields: number, chars: number): string {
  let at = 0;
  for (let f = 0; f < fields; f++) {
    while (at < line.length && (line[at] === ' ' || line[at] === '\t')) at++;
    while (at < line.length && line[at] !== ' ' && line[at] !== '\t') at++;
  }
  return line.slice(Math.min(line.length, at + chars));
}

/**
 * busybox 1.35's uniq (coreutils/uniq.c): `-c -d -u -i -z`, `-f N`, `-s N`, `-w N` (glued or
 * apart), `[FILE [OUTFILE]]`; lines are bytes, read to a newline (the last may lack it), written
 * with a newline or, under -z, a NUL.
 */
export function busyboxUniq(host: ProgramHost): Command {
  return {
    name: 'uniq',
    async execute(args, ctx) {
      const help = helpAsked(args, usage);
      if (help) return help;
      const parsed = getopt('uniq', usage, args, 'cduiz', 'fsw');
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      const numbers: Record<string, number> = { f: 0, s: 0, w: Infinity };
      for (const letter of ['f', 's', 'w']) {
        const text = opts.get(letter);
        if (typeof text !== 'string') continue;
        if (!/^\d+$/.test(text)) return die(`invalid number '${text}'`);
        numbers[letter] = Number(text);
      }
      if (operands.length > 2) return { stdout: '', stderr: `${banner}${usage}`, exitCode: 1 };
      const [input = '-', output] = operands;
      const read = await readOperand(ctx, input);
      if ('error' in read) return die(`can't open '${input}': ${read.error}`);
      // Reading a directory fails: stdio's error at the end, die_if_ferror's words.
      if ('directory' in read) return die(`${input}: I/O error`);
      // The output is opened (and truncated) before the input is read: `uniq f f` reads nothing.
      const same =
        output !== undefined && output !== '-' && input !== '-' && ctx.fs.resolvePath(ctx.cwd, input) === ctx.fs.resolvePath(ctx.cwd, output);
      const text = same ? '' : read.toString('latin1');
      const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
      const key = (line: string): string => {
        const rest = compared(line, numbers.f!, numbers.s!).slice(0, numbers.w);
        // strncasecmp in the C locale: A to Z only.
        return opts.has('i') ? rest.replace(/[A-Z]/g, (c) => c.toLowerCase()) : rest;
      };
      const end = opts.has('z') ? '\0' : '\n';
      let out = '';
      for (let i = 0; i < lines.length;) {
        let j = i + 1;
        while (j < lines.length && key(lines[j]!) === key(lines[i]!)) j++;
        const dups = j - i - 1;
        if (!(opts.has('d') && dups === 0) && !(opts.has('u') && dups > 0))
          out += `${opts.has('c') ? `${String(dups + 1).padStart(7)} ` : ''}${lines[i]}${end}`;
        i = j;
      }
      const bytes = Buffer.from(out, 'latin1');
      if (output === undefined || output === '-') return bytesOutput(bytes);
      const wrote = await writeToOption(host, ctx.cwd, 'uniq', output, bytes);
      return 'openError' in wrote ? die(`can't open '${output}': ${wrote.openError}`) : { stdout: '', stderr: wrote.stderr, exitCode: 0 };
    },
  };
}
