import type { Command } from 'just-bash';
import { getopt, isResult, usage } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { withRefusals } from './guest-access.js';
import { probedArgs } from './terminal-stdin.js';

/** busybox 1.35's awk usage, as it prints it after a wrong command line. */
const awkUsage = [
  'Usage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...',
  '',
  '\t-v VAR=VAL\tSet variable',
  '\t-F SEP\t\tUse SEP as field separator',
  '\t-f FILE\t\tRead program from FILE',
  '\t-e AWK_PROGRAM',
  '',
].join('\n');

/**
 * Where each part of an awk program came from, handed to just-bash's awk beside its arguments
 * (patch item 96): a message about line N of the joined program names the part's file (or `cmd.
 * line`) and its own line, as busybox's `awk: FILE:LINE: …`.
 */
const awkSources = Symbol.for('reflex.awkSources');

/** One part of the program: its name in messages, and the line of the joined program it starts on. */
interface AwkSource {
  name: string;
  firstLine: number;
}

/**
 * busybox's awk command line (getopt32 `+F:v:*f:*e:*W:`): options up to the first operand, `-v`,
 * `-f` and `-e` as often as given; the programs of `-f` files (`-` is stdin) come first, then those
 * of `-e`, and with neither the first operand is the program. `-W` is ignored with a warning; a
 * `-f` file that does not open ends awk before it runs. just-bash's awk runs the joined program.
 */
export function awkCommand(): Command {
  return {
    name: 'awk',
    async execute(args, ctx) {
      if (!ctx.origCommand) return { stdout: '', stderr: 'sh: awk: not found\n', exitCode: 127 };
      const files: string[] = [];
      const programs: string[] = [];
      const assignments: string[] = [];
      let separator: string | undefined;
      let warned = '';
      const parsed = getopt('awk', awkUsage, args, '', 'FvfeW', null, {
        untilOperand: true,
        onOption: (letter, value) => {
          const v = String(value);
          if (letter === 'f') files.push(v);
          else if (letter === 'e') programs.push(v);
          else if (letter === 'v') assignments.push(v);
          else if (letter === 'F') separator = v;
          return undefined;
        },
      });
      if (isResult(parsed)) return parsed;
      if (parsed.opts.has('W')) warned = 'awk: warning: option -W is ignored\n';
      // is_assignment: a name, `=`, a value.
      if (assignments.some((a) => !/^[A-Za-z_][A-Za-z0-9_]*=/s.test(a))) return usage(awkUsage);
      const settings = [...(separator === undefined ? [] : ['-F', separator]), ...assignments.flatMap((a) => ['-v', a])];
      const operands = [...parsed.operands];
      const parts: { name: string; text: string }[] = [];
      for (const f of files) {
        const read = await readOperand(ctx, f);
        if (!Buffer.isBuffer(read)) {
          const why = 'error' in read ? read.error : 'Is a directory';
          return { stdout: '', stderr: `${warned}awk: can't open '${f}': ${why}\n`, exitCode: 1 };
        }
        // As text, as a program given on the command line: just-bash's awk takes its arguments' UTF-8 bytes.
        parts.push({ name: f, text: read.toString('utf8') });
      }
      for (const p of programs) parts.push({ name: 'cmd. line', text: p });
      if (parts.length === 0) {
        if (operands.length === 0) return { ...usage(awkUsage), stderr: `${warned}${usage(awkUsage).stderr}` };
        parts.push({ name: 'cmd. line', text: operands.shift()! });
      }
      const joined = [...settings, parts.map((p) => p.text).join('\n'), ...operands];
      // On a terminal, a rule of its own may come first (terminal-stdin.ts): the program's lines then start at 2.
      const argv = probedArgs('awk', joined, () => String(ctx.stdin));
      const sources: AwkSource[] = [];
      let line = argv === joined ? 1 : 2;
      for (const p of parts) {
        sources.push({ name: p.name, firstLine: line });
        line += p.text.split('\n').length;
      }
      const result = await ctx.origCommand(Object.assign([...argv], { [awkSources]: sources }));
      return { ...result, stderr: `${warned}${await withRefusals('awk', result.stderr, ctx.fs, ctx.cwd, operands)}` };
    },
  };
}
