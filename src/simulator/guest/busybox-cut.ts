import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import type { ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';

const cutUsage =
  'Usage: cut [OPTIONS] [FILE]...\n\nPrint selected fields from FILEs to stdout\n\n' +
  '\t-b LIST\tOutput only bytes from LIST\n\t-c LIST\tOutput only characters from LIST\n' +
  '\t-d SEP\tField delimiter for input (default -f TAB, -F run of whitespace)\n' +
  '\t-O SEP\tField delimiter for output (default = -d for -f, one space for -F)\n' +
  "\t-D\tDon't sort/collate sections or match -fF lines without delimiter\n" +
  '\t-f LIST\tPrint only these fields (-d is single char)\n\t-F LIST\tPrint only these fields (-d is regex)\n' +
  '\t-s\tOutput only lines containing delimiter\n\t-n\tIgnored\n';

const fail = (stderr: string): ExecResult => ({ stdout: '', stderr, exitCode: 1 });

/** One range of a list, zero-based and inclusive (`endpos` INT_MAX for `N-`). */
interface Range {
  start: number;
  end: number;
}

const intMax = 2 ** 31 - 1;

/** busybox's xatoi_positive: decimal digits only, else `invalid number 'X'`. */
function positive(text: string): number | string {
  if (!/^\d+$/.test(text)) return `cut: invalid number '${text}'\n`;
  const n = Number(text);
  return n > intMax ? `cut: number ${text} is not in 0..${intMax} range\n` : n;
}

/** cut.c's list parser: `N`, `N-`, `N-M`, `-M`, comma separated, empty ones allowed; sorted by start unless -D. */
function ranges(list: string, keepOrder: boolean): Range[] | string {
  const out: Range[] = [];
  for (const token of list.split(',')) {
    if (token === '') continue;
    const dash = token.indexOf('-');
    const from = dash < 0 ? token : token.slice(0, dash);
    let start = 0;
    if (from !== '') {
      const n = positive(from);
      if (typeof n === 'string') return n;
      start = n === 0 ? 0 : n - 1;
    }
    let end = start;
    if (dash >= 0) {
      const to = token.slice(dash + 1);
      if (to === '') end = intMax;
      else {
        const n = positive(to);
        if (typeof n === 'string') return n;
        if (n < start) return `cut: ${n}<${start}\n`;
        end = n - 1;
      }
    }
    out.push({ start, end });
  }
  if (out.length === 0) return 'cut: missing list of positions\n';
  // qsort by start: equal starts may come in either order; a stable sort keeps the given one.
  return keepOrder ? out : out.sort((a, b) => a.start - b.start);
}

/** What cut selects from one line (its newline taken off; C's strlen stops at a NUL byte). */
interface Cutter {
  (line: string, linenum: number): string | undefined;
}

/** -b and -c (no locale: characters are bytes): each position once, in the order of the lists. */
const byPosition =
  (lists: Range[]): Cutter =>
  (line) => {
    const printed = new Set<number>();
    let out = '';
    for (const r of lists)
      // As cut.c: the end is checked after a position is printed (`1-0` prints the first).
      for (let at = r.start; at < line.length;) {
        if (!printed.has(at)) out += line[at]!;
        printed.add(at);
        if (++at > r.end) break;
      }
    return out;
  };

/** `-d '\n'`: lines are the fields, each selected line printed as it is. */
const byLine =
  (lists: Range[]): Cutter =>
  (line, linenum) =>
    lists.some((r) => linenum >= r.start && linenum <= r.end) ? line : undefined;

/**
 * -f (one delimiter character) and -F (a regular expression): cut.c's loop over the line's
 * delimiters, ranges in order, joined with the output delimiter; a line without any delimiter is
 * printed whole (dropped under -s), except under -F.
 */
function byField(lists: Range[], delim: string | RegExp, odelim: string, suppress: boolean, keepOrder: boolean): Cutter {
  const regex = typeof delim !== 'string';
  return (line) => {
    let uu = 0;
    let start = 0;
    let end = 0;
    let out = 0;
    let dcount = 0;
    let pos = 0;
    let text = '';
    for (;;) {
      if (end === line.length || dcount > lists[pos]!.end) {
        if (++pos >= lists.length) break;
        if (keepOrder) start = dcount = uu = 0;
        end = 0;
      }
      if (uu === line.length) {
        if (!pos && !dcount && !regex) {
          if (suppress) return undefined;
        } else if (dcount < lists[pos]!.start) start = line.length;
        end = line.length;
      } else {
        if (regex) {
          delim.lastIndex = uu;
          const m = delim.exec(line);
          if (m) {
            end = m.index;
            uu = m.index + Math.max(m[0].length, 1);
          } else {
            uu = line.length;
            continue;
          }
        } else if (line[(end = uu++)] !== delim) continue;
        if (dcount++ < lists[pos]!.start) {
          start = uu;
          continue;
        }
      }
      if (end !== start || !regex) text += (out++ ? odelim : '') + line.slice(start, end);
      start = uu;
      if (!dcount) break;
    }
    return text;
  };
}

/** A POSIX extended expression as JavaScript's (its bracket classes spelled out), searched from a position. */
function extended(pattern: string): RegExp {
  const classes: Record<string, string> = {
    space: ' \\t\\n\\r\\f\\v',
    blank: ' \\t',
    digit: '0-9',
    alpha: 'A-Za-z',
    alnum: '0-9A-Za-z',
    punct: '!-/:-@[-`{-~',
  };
  return new RegExp(
    pattern.replace(/\[:(\w+):\]/g, (m, name: string) => classes[name] ?? m),
    'g',
  );
}

/**
 * busybox 1.35's `cut` (coreutils/cut.c): `-b`/`-c`/`-f`/`-F LIST`, `-d`, `-O`, `-s`, `-D`, `-n`;
 * each operand in turn, one it cannot open said (`cut: F: why`) and the next read, a directory read
 * as empty; every selected line ends with a newline. Its output and its messages come out in the
 * order it wrote them.
 */
export function cutCommand(host: ProgramHost): Command {
  return {
    name: 'cut',
    async execute(args, ctx) {
      const parsed = getopt('cut', cutUsage, args, 'sDn', 'bcfdOF', {});
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      const kinds = ['b', 'c', 'f', 'F'].filter((k) => opts.has(k));
      if (kinds.length > 1) return fail(`${banner}${cutUsage}`);
      if (kinds.length === 0) return fail('cut: expected a list of bytes, characters, or fields\n');
      const kind = kinds[0]!;
      const fields = kind === 'f' || kind === 'F';
      if (!fields && opts.has('s')) return fail('cut: suppressing non-delimited lines makes sense only when operating on fields\n');
      if (!fields && opts.has('d')) return fail('cut: a delimiter may be specified only when operating on fields\n');
      const keepOrder = opts.has('D');
      const lists = ranges(opts.get(kind) as string, keepOrder);
      if (typeof lists === 'string') return fail(lists);
      const given = (opts.get('d') as string | undefined) ?? '';
      const delim = given !== '' ? given : kind === 'F' ? '[[:space:]]+' : '\t';
      const odelim = (opts.get('O') as string | undefined) ?? (kind === 'F' ? ' ' : delim);
      const cutter =
        kind === 'F'
          ? byField(lists, extended(delim), odelim, opts.has('s'), keepOrder)
          : !fields
            ? byPosition(lists)
            : delim[0] === '\n'
              ? byLine(lists)
              : byField(lists, delim[0]!, odelim, opts.has('s'), keepOrder);
      const o = new ProgramOutput();
      for (const f of operands.length ? operands : ['-']) {
        const data = await read(ctx, f, o);
        if (data === undefined) continue;
        let text = '';
        const lines = data.toString('latin1').split('\n');
        if (lines.at(-1) === '') lines.pop();
        lines.forEach((line, n) => {
          const selected = cutter(line.split('\0')[0]!, n);
          if (selected !== undefined) text += `${selected}\n`;
        });
        o.bytes(Buffer.from(text, 'latin1'));
      }
      return o.result(o.stderr ? 1 : 0);
    },
  };
}

/** An operand's bytes (a directory: none, as reading it fails quietly), or undefined after saying why it does not open. */
async function read(ctx: CommandContext, f: string, o: ProgramOutput): Promise<Buffer | undefined> {
  const r = await readOperand(ctx, f);
  if ('error' in r) return void o.err(`cut: ${f}: ${r.error}\n`);
  return 'directory' in r ? Buffer.alloc(0) : r;
}
