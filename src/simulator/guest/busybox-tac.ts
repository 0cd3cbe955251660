import type { Command } from 'just-bash';
import { getopt, helpAsked, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { ProgramOutput } from './program-output.js';

const usage = 'Usage: tac [FILE]...\n\nConcatenate FILEs and print them in reverse\n';

/**
 * busybox 1.35's tac (coreutils/tac.c): the lines of all its operands (stdin for none or `-`) in
 * one list, written last first; a line keeps its newline, the last one may lack it (`a\nb` is
 * `ba\n`); an operand that does not open or read is said (`tac: F: why`) and the others read, status 1.
 */
export function tacCommand(): Command {
  return {
    name: 'tac',
    async execute(args, ctx) {
      const help = helpAsked(args, usage);
      if (help) return help;
      const parsed = getopt('tac', usage, args, '', '');
      if (isResult(parsed)) return parsed;
      const o = new ProgramOutput();
      const lines: Buffer[] = [];
      let failed = false;
      for (const f of parsed.operands.length ? parsed.operands : ['-']) {
        const read = await readOperand(ctx, f);
        if ('error' in read || 'directory' in read) {
          o.err(`tac: ${f}: ${'error' in read ? read.error : 'Is a directory'}\n`);
          failed = true;
          continue;
        }
        for (let start = 0; start < read.length;) {
          const end = read.indexOf(10, start);
          const next = end < 0 ? read.length : end + 1;
          lines.push(read.subarray(start, next));
          start = next;
        }
      }
      o.bytes(Buffer.concat(lines.reverse()));
      return o.result(failed ? 1 : 0);
    },
  };
}
