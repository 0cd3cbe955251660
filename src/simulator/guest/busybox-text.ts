import type { Command, CommandContext, ExecResult } from 'just-bash';
import { apart, banner, getopt as readOptions, helpAsked, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { wcCounting } from './busybox-wc.js';
import { withRefusals } from './guest-access.js';
import { execFailure } from './program-output.js';
import { shellQuote } from './program-run.js';

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

const xargsUsage =
  'Usage: xargs [OPTIONS] [PROG ARGS]\n\nRun PROG on every item given by stdin\n\n\t-0\tNUL terminated input\n\t-a FILE\tRead from FILE instead of stdin\n' +
  "\t-r\tDon't run command if input is empty\n\t-t\tPrint the command on stderr before execution\n\t-p\tAsk user whether to run each command\n" +
  '\t-E STR,-e[STR]\tSTR stops input processing\n\t-I STR\tReplace STR within PROG ARGS with input line\n\t-n N\tPass no more than N args to PROG\n' +
  '\t-s N\tPass command line of no more than N bytes\n\t-P N\tRun up to N PROGs in parallel\n\t-x\tExit if size is exceeded\n';

const pasteUsage =
  'Usage: paste [-d LIST] [-s] [FILE]...\n\nPaste lines from each input file, separated with tab\n\n' +
  '\t-d LIST\tUse delimiters from LIST, not tab\n\t-s      Serial: one file at a time\n';

/**
 * Where just-bash's text programs answer as GNU's (or its own) and busybox's differ in what scripts
 * read: `wc` pads to 9 unless one count of one file, `xargs` takes `-nN` in one word and `-I STR`,
 * `paste` reads stdin without a file operand. The rest of each program is just-bash's (`sort`,
 * `uniq` and `shuf` are busybox's own: busybox-sort.ts, busybox-uniq.ts, busybox-shuf.ts).
 */
export function busyboxText(): Command[] {
  // busybox's wc counted in one place (busybox-wc.ts), so its lines and its messages come out in the order it wrote them.
  const wc: Command = {
    name: 'wc',
    async execute(args, ctx) {
      if (!ctx.origCommand) return fail('sh: wc: not found\n', 127);
      return wcCounting(args, ctx);
    },
  };
  const xargs: Command = {
    name: 'xargs',
    async execute(args, ctx) {
      if (!ctx.origCommand) return fail('sh: xargs: not found\n', 127);
      // Its options end at the first word that is not one (getopt32's "+"): their clusters are taken apart (`-rn1`).
      let end = 0;
      for (; end < args.length; end++) {
        const a = args[end]!;
        if (!a.startsWith('-') || a === '-' || a === '--') break;
        const letter = [...a.slice(1)].findIndex((c) => 'nsLPEIa'.includes(c));
        if (letter >= 0 && letter === a.length - 2) end++;
      }
      const given = [...(apart(args.slice(0, end), 'nsLPEIa', 'e') as string[]), ...args.slice(end)];
      // -a FILE: the file is its input in stdin's place (run again without it, the file's bytes on its stdin).
      const from = given.slice(0, end + given.length - args.length).lastIndexOf('-a');
      if (from >= 0) {
        const file = given[from + 1] ?? '';
        const read = await readOperand(ctx, file);
        if ('error' in read) return fail(`xargs: can't open '${file}': ${read.error}\n`);
        const rest = given.filter((_w, i) => i !== from && i !== from + 1);
        const bytes = 'directory' in read ? '' : read.toString('latin1');
        return ctx.exec!(['xargs', ...rest].map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: bytes });
      }
      const split: string[] = [];
      let replace: string | undefined;
      let at = 0;
      for (; at < given.length; at++) {
        const a = given[at]!;
        if (!a.startsWith('-') || a === '-') break;
        const joined = /^-([nsLPE])(.+)$/.exec(a);
        if (joined) split.push(`-${joined[1]}`, joined[2]!);
        else if (a === '-I') replace = given[++at];
        else if (a.startsWith('-I')) replace = a.slice(2);
        else if (/^-[nsLPEa]$/.test(a)) split.push(a, given[++at] ?? '');
        else if (/^-[0rtpx]*d/.test(a)) return { stdout: '', stderr: `xargs: invalid option -- 'd'\n${banner}${xargsUsage}`, exitCode: 1 };
        else split.push(a);
      }
      const command = given.slice(at);
      if (replace === undefined && noArguments(String(ctx.stdin), split)) {
        // busybox runs the command once on input with no arguments (unless -r); just-bash's xargs runs nothing.
        const argv = command.length ? command : ['echo'];
        const run = await ctx.exec!(argv.map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: '' });
        const traced = split.some((a) => /^-[^-]*t/.test(a)) ? `${argv.join(' ')}\n` : '';
        return busyboxExit({ ...run, stderr: traced + run.stderr }, argv[0]!);
      }
      if (replace === undefined) return busyboxExit(await ctx.origCommand([...split, ...command]), command[0] ?? 'echo');
      return replaceEach(ctx, replace, command.length ? command : ['echo'], { trace: split.includes('-t'), nul: split.includes('-0') });
    },
  };
  // busybox's paste reads stdin when it has no file operand (just-bash's wants one) and takes -sd+ in one word.
  const paste: Command = {
    name: 'paste',
    async execute(args, ctx) {
      if (!ctx.origCommand) return fail('sh: paste: not found\n', 127);
      const help = helpAsked(args, pasteUsage);
      if (help) return help;
      const line = readOptions('paste', pasteUsage, args, 's', 'd', null);
      if (isResult(line)) return line;
      const delimiters = line.opts.get('d');
      const options = [...(line.opts.has('s') ? ['-s'] : []), ...(typeof delimiters === 'string' ? ['-d', delimiters] : [])];
      const files = line.operands;
      const operands = files.length ? files : ['-'];
      const result = await ctx.origCommand([...options, ...operands]);
      return { ...result, stderr: await withRefusals('paste', result.stderr, ctx.fs, ctx.cwd, operands) };
    },
  };
  return [wc, xargs, getopt, paste];
}

/**
 * busybox's `getopt` (util-linux's form): `-o SHORT [-l LONG,…] [-n NAME] [-q] -- ARGS…` prints the
 * options normalised (` -a -b 'x' --long -- 'y'`: values and operands quoted, operands after `--`);
 * an unknown option or a missing value is reported and ends with 1, the rest still printed.
 */
const getopt: Command = {
  name: 'getopt',
  async execute(args) {
    let short: string | undefined;
    const long = new Map<string, string>();
    let name = 'getopt';
    let quiet = false;
    // The old form (`getopt OPTSTRING ARGS…`) prints its words unquoted.
    let quote = shellQuote;
    let at = 0;
    for (; at < args.length; at++) {
      const a = args[at]!;
      if (a === '--') {
        at++;
        break;
      }
      if (a === '-o' || a === '--options') short = args[++at] ?? '';
      else if (a === '-l' || a === '--longoptions')
        for (const spec of (args[++at] ?? '').split(',').filter(Boolean))
          long.set(spec.replace(/:+$/, ''), /::$/.test(spec) ? '::' : /:$/.test(spec) ? ':' : '');
      else if (a === '-n' || a === '--name') name = args[++at] ?? name;
      else if (a === '-q' || a === '--quiet') quiet = true;
      else if (short === undefined && !a.startsWith('-')) {
        short = a;
        quote = (w: string) => w;
        at++;
        break;
      } else break;
    }
    if (short === undefined) return fail(`${name}: missing optstring argument\n`, 2);
    const spec = short.replace(/^[+-]/, '');
    const takes = (c: string): string | undefined => {
      const i = spec.indexOf(c);
      if (i < 0 || c === ':') return undefined;
      return spec.slice(i + 1).startsWith('::') ? '::' : spec[i + 1] === ':' ? ':' : '';
    };
    const rest = args.slice(at);
    let out = '';
    const operands: string[] = [];
    let stderr = '';
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      if (a === '--') {
        operands.push(...rest.slice(i + 1));
        break;
      }
      if (a.startsWith('--') && a.length > 2) {
        const [key, value] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
        const matches = [...long.keys()].filter((k) => k === key || k.startsWith(key));
        const match = matches.includes(key) ? key : matches.length === 1 ? matches[0] : undefined;
        if (match === undefined) {
          stderr += `${name}: unrecognized option '${a}'\n`;
          continue;
        }
        const kind = long.get(match)!;
        if (kind === ':') {
          const v = value ?? rest[++i];
          if (v === undefined) stderr += `${name}: option '--${match}' requires an argument\n`;
          else out += ` --${match} ${quote(v)}`;
        } else if (kind === '::') out += ` --${match} ${quote(value ?? '')}`;
        else if (value !== undefined) stderr += `${name}: option '--${match}' doesn't allow an argument\n`;
        else out += ` --${match}`;
        continue;
      }
      if (a.startsWith('-') && a.length > 1) {
        for (let k = 1; k < a.length; k++) {
          const c = a[k]!;
          const kind = takes(c);
          if (kind === undefined) {
            stderr += `${name}: invalid option -- '${c}'\n`;
            continue;
          }
          if (kind === '') {
            out += ` -${c}`;
            continue;
          }
          const attached = a.slice(k + 1);
          if (kind === '::') out += ` -${c} ${quote(attached)}`;
          else if (attached) out += ` -${c} ${quote(attached)}`;
          else if (rest[i + 1] !== undefined) out += ` -${c} ${quote(rest[++i]!)}`;
          else stderr += `${name}: option requires an argument -- '${c}'\n`;
          break;
        }
        continue;
      }
      operands.push(a);
    }
    out += ` --${operands.map((o) => ` ${quote(o)}`).join('')}\n`;
    return { stdout: out, stderr: quiet ? '' : stderr, exitCode: stderr ? 1 : 0 };
  },
};

/**
 * busybox's xargs exit statuses for its command's (just-bash's xargs passes the command's own on):
 * 123 when a run exited 1 to 125, 124 and `exited with status 255; aborting` for 255, and a
 * program it cannot find is `xargs: X: No such file or directory`, 127. Its own refusals (a bad
 * option) stay 1.
 */
async function busyboxExit(result: ExecResult, program: string): Promise<ExecResult> {
  const own = /^xargs: /m.test(result.stderr);
  if (result.exitCode === 127 || result.exitCode === 126) return execFailure(result, program, (why) => `xargs: ${program}: ${why}\n`);
  if (result.exitCode === 255) return { ...result, stderr: `${result.stderr}xargs: ${program}: exited with status 255; aborting\n`, exitCode: 124 };
  if (result.exitCode >= 1 && result.exitCode <= 125 && !own) return { ...result, exitCode: 123 };
  return result;
}

/** Whether xargs's input gives its command no argument, and it is to run it once all the same (no `-r`). */
function noArguments(input: string, options: string[]): boolean {
  if (options.some((a) => a === '--no-run-if-empty' || /^-[^-]*r/.test(a))) return false;
  return options.some((a) => /^-[^-]*0/.test(a)) ? input === '' : !/\S/.test(input);
}

/** `xargs -I STR CMD…`: CMD once per input line, STR replaced by the line in each argument. */
async function replaceEach(
  ctx: CommandContext,
  replace: string,
  command: string[],
  { trace, nul }: { trace: boolean; nul: boolean },
): Promise<ExecResult> {
  const out: ExecResult = { stdout: '', stderr: '', exitCode: 0 };
  // An item is a line (under -0, what ends at a NUL), its leading blanks dropped (its trailing ones kept); an empty one is skipped.
  for (const line of String(ctx.stdin).split(nul ? '\0' : '\n')) {
    const item = line.replace(/^[ \t]+/, '');
    if (item === '') continue;
    const argv = command.map((w) => w.split(replace).join(item));
    if (trace) out.stderr += `${argv.join(' ')}\n`;
    const run = await ctx.exec!(argv.map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: '' });
    out.stdout += run.stdout;
    out.stderr += run.stderr;
    if (run.exitCode === 127 || run.exitCode === 126) return { ...out, exitCode: run.exitCode };
    if (run.exitCode !== 0) out.exitCode = 123;
  }
  return out;
}
