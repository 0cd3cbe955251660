import { randomInt } from 'node:crypto';
import type { Command, ExecResult } from 'just-bash';
import { banner, getopt, helpAsked, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { bytesOutput } from './bytes-output.js';
import { writeToOption } from './guest-open.js';
import type { ProgramHost } from './program-host.js';

const usage =
  'Usage: shuf [-n NUM] [-o FILE] [-z] [FILE | -e [ARG...] | -i L-H]\n\nRandomly permute lines\n\n' +
  '\t-n NUM\tOutput at most NUM lines\n\t-o FILE\tWrite to FILE, not standard output\n\t-z\tNUL terminated output\n' +
  '\t-e\tTreat ARGs as lines\n\t-i L-H\tTreat numbers L-H as lines\n';

const die = (why: string): ExecResult => ({ stdout: '', stderr: `shuf: ${why}\n`, exitCode: 1 });

/** libbb's xatou: decimal digits only (no sign, no space), up to 2³²−1; undefined for anything else. */
function xatou(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 0xffff_ffff ? n : undefined;
}

/**
 * busybox 1.35's shuf (coreutils/shuf.c): its lines are the operands (`-e`), a range of numbers
 * (`-i L-H`) or one file's (stdin by default; a NUL ends a line as a newline does), shuffled, then
 * `-n` read and `-o` opened, in that order, as busybox does them.
 */
export function busyboxShuf(host: ProgramHost): Command {
  return {
    name: 'shuf',
    async execute(args, ctx) {
      const help = helpAsked(args, usage);
      if (help) return help;
      const parsed = getopt('shuf', usage, args, 'ez', 'ino');
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      const range = opts.get('i');
      // getopt32's "e--i:i--e": the two are exclusive.
      if (opts.has('e') && range !== undefined) return { stdout: '', stderr: `${banner}${usage}`, exitCode: 1 };
      let lines: Buffer[];
      if (opts.has('e')) lines = operands.map((word) => Buffer.from(word, 'utf8'));
      else if (typeof range === 'string') {
        const dash = range.indexOf('-');
        if (dash < 0) return die(`bad range '${range}'`);
        const [lowText, highText] = [range.slice(0, dash), range.slice(dash + 1)];
        const low = xatou(lowText);
        if (low === undefined) return die(`invalid number '${lowText}'`);
        const high = xatou(highText);
        if (high === undefined) return die(`invalid number '${highText}'`);
        if (high < low) return die(`bad range '${range}'`);
        lines = Array.from({ length: high - low + 1 }, (_, k) => Buffer.from(String(low + k)));
      } else {
        if (operands.length > 1) return { stdout: '', stderr: `${banner}${usage}`, exitCode: 1 };
        const name = operands[0] ?? '-';
        const read = await readOperand(ctx, name);
        if ('error' in read) return die(`${name}: ${read.error}`);
        lines = 'directory' in read ? [] : splitLines(read);
      }
      for (let i = lines.length - 1; i > 0; i--) {
        const j = randomInt(i + 1);
        [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      }
      const most = opts.get('n');
      if (typeof most === 'string') {
        const n = xatou(most);
        if (n === undefined) return die(`invalid number '${most}'`);
        lines = lines.slice(0, n);
      }
      const end = Buffer.from(opts.has('z') ? '\0' : '\n');
      const out = Buffer.concat(lines.flatMap((line) => [line, end]));
      const target = opts.get('o');
      if (typeof target !== 'string') return bytesOutput(out);
      const wrote = await writeToOption(host, ctx.cwd, 'shuf', target, out);
      return 'openError' in wrote ? die(`can't open '${target}': ${wrote.openError}`) : { stdout: '', stderr: wrote.stderr, exitCode: 0 };
    },
  };
}

/** A file's lines as libbb's xmalloc_fgetline reads them: each ends at a newline or a NUL, the last may end at the end. */
function splitLines(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] !== 10 && data[i] !== 0) continue;
    lines.push(data.subarray(start, i));
    start = i + 1;
  }
  if (start < data.length) lines.push(data.subarray(start));
  return lines;
}
