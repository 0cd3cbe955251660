import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { diffArrays } from 'diff';
import { banner, getopt, helpAsked, isResult } from './busybox-getopt.js';
import { bytesOutput } from './bytes-output.js';

const diffUsage =
  'Usage: diff [-abBdiNqrTstw] [-L LABEL] [-S FILE] [-U LINES] FILE1 FILE2\n\n' +
  'Compare files line by line and output the differences between them.\n' +
  'This implementation supports unified diffs only.\n\n' +
  '\t-a\tTreat all files as text\n' +
  '\t-b\tIgnore changes in the amount of whitespace\n' +
  '\t-B\tIgnore changes whose lines are all blank\n' +
  '\t-d\tTry hard to find a smaller set of changes\n' +
  '\t-i\tIgnore case differences\n' +
  '\t-L\tUse LABEL instead of the filename in the unified header\n' +
  '\t-N\tTreat absent files as empty\n' +
  '\t-q\tOutput only whether files differ\n' +
  '\t-r\tRecurse\n' +
  '\t-S\tStart with FILE when comparing directories\n' +
  '\t-T\tMake tabs line up by prefixing a tab when necessary\n' +
  '\t-s\tReport when two files are the same\n' +
  '\t-t\tExpand tabs to spaces in output\n' +
  '\t-U\tOutput LINES lines of context\n' +
  '\t-w\tIgnore all whitespace\n';

interface Options {
  flags: Set<string>;
  labels: string[];
  start: string | undefined;
  context: number;
}

/** A line of a file, as bytes (latin1), and whether a newline ends it (the last may lack one). */
interface Line {
  text: string;
  newline: boolean;
}

/** One step of the edit script: a line both have, one only the old file has, one only the new has. */
type Step = { op: ' '; a: number; b: number } | { op: '-'; a: number; b: number } | { op: '+'; a: number; b: number };

/** What the comparison of two operands came to: 0 the same, 1 different, 2 trouble. */
interface Outcome {
  out: string;
  err: string;
  status: number;
}

function linesOf(data: Buffer): Line[] {
  const text = data.toString('latin1');
  if (text === '') return [];
  const parts = text.split('\n');
  const last = parts.pop()!;
  const lines = parts.map((t) => ({ text: t, newline: true }));
  if (last !== '') lines.push({ text: last, newline: false });
  return lines;
}

/** The line as the options compare it (`-b`, `-w`, `-i`); a last line without its newline is another line. */
function keyOf(line: Line, flags: Set<string>): string {
  let t = line.text;
  if (flags.has('w')) t = t.replace(/[ \t\r\f\v]+/g, '');
  else if (flags.has('b')) t = t.replace(/[ \t\r\f\v]+/g, ' ').replace(/ $/, '');
  if (flags.has('i')) t = t.toLowerCase();
  return line.newline ? t : `${t}\0`;
}

function stepsOf(a: Line[], b: Line[], flags: Set<string>): Step[] {
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  for (const part of diffArrays(
    a.map((l) => keyOf(l, flags)),
    b.map((l) => keyOf(l, flags)),
  )) {
    for (let k = 0; k < part.value.length; k++) {
      if (part.added) steps.push({ op: '+', a: i, b: j++ });
      else if (part.removed) steps.push({ op: '-', a: i++, b: j });
      else steps.push({ op: ' ', a: i++, b: j++ });
    }
  }
  return steps;
}

/** The steps' runs of changes; `ignored` where `-B` ignores the run (every line of it blank). */
function changeRuns(steps: Step[], a: Line[], b: Line[], flags: Set<string>): { from: number; to: number; ignored: boolean }[] {
  const runs: { from: number; to: number; ignored: boolean }[] = [];
  for (let s = 0; s < steps.length;) {
    if (steps[s]!.op === ' ') {
      s++;
      continue;
    }
    const from = s;
    while (s < steps.length && steps[s]!.op !== ' ') s++;
    const blank = steps.slice(from, s).every(
      (step) =>
        keyOf(step.op === '-' ? a[step.a]! : b[step.b]!, flags)
          .replace(/\0$/, '')
          .trim() === '',
    );
    runs.push({ from, to: s, ignored: flags.has('B') && blank });
  }
  return runs;
}

const expandTabs = (text: string): string => {
  let out = '';
  for (const c of text) out += c === '\t' ? ' '.repeat(8 - (out.length % 8)) : c;
  return out;
};

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`);

/** The unified diff of two files' lines (headers included), or '' when the options find them the same. */
function unified(a: Line[], b: Line[], names: [string, string], opts: Options): string {
  const steps = stepsOf(a, b, opts.flags);
  const runs = changeRuns(steps, a, b, opts.flags);
  if (runs.every((run) => run.ignored)) return '';
  const context = opts.context;
  let out = `--- ${opts.labels[0] ?? names[0]}\n+++ ${opts.labels[1] ?? names[1]}\n`;
  const line = (op: string, l: Line): string => {
    const text = opts.flags.has('t') ? expandTabs(l.text) : l.text;
    return `${op}${opts.flags.has('T') ? '\t' : ''}${text}\n${l.newline ? '' : '\\ No newline at end of file\n'}`;
  };
  for (let r = 0; r < runs.length;) {
    const first = runs[r]!;
    let last = first;
    // Changes with at most twice the context between them share a hunk; one of -B's blank changes alone makes none.
    let kept = !first.ignored;
    while (r + 1 < runs.length && runs[r + 1]!.from - last.to <= 2 * context) {
      last = runs[++r]!;
      kept ||= !last.ignored;
    }
    r++;
    if (!kept) continue;
    const from = Math.max(0, first.from - context);
    const to = Math.min(steps.length, last.to + context);
    const hunk = steps.slice(from, to);
    const oldCount = hunk.filter((s) => s.op !== '+').length;
    const newCount = hunk.filter((s) => s.op !== '-').length;
    const oldStart = hunk[0]!.a + (oldCount ? 1 : 0);
    const newStart = hunk[0]!.b + (newCount ? 1 : 0);
    out += `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@\n`;
    for (const s of hunk) out += line(s.op, s.op === '+' ? b[s.b]! : a[s.a]!);
  }
  return out;
}

/**
 * busybox 1.35's `diff` (unified output only): `-a -b -B -d -i -L LABEL -N -q -r -s -S FILE -t -T
 * -U LINES -w`, a file against a directory's file of its name, two directories (their files
 * compared, `Only in`, `Common subdirectories`; with `-r` the files below, a directory the other
 * side lacks skipped but under `-N`), a file with a NUL byte as binary (`Files A and B differ`),
 * `\ No newline at end of file`; 0 the same, 1 different, 2 trouble. The edit script is jsdiff's
 * (Myers), which for an ambiguous change may align lines otherwise than busybox's own algorithm.
 */
export function diffCommand(): Command {
  return {
    name: 'diff',
    async execute(args, ctx) {
      const help = helpAsked(args, diffUsage);
      if (help) return help;
      const labels: string[] = [];
      const parsed = getopt('diff', diffUsage, args, 'abBdiNqrTstwupE', 'LSU', null, {
        onOption: (letter, value) => {
          if (letter === 'L' && typeof value === 'string') labels.push(value);
          return undefined;
        },
      });
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      if (operands.length !== 2) return { stdout: '', stderr: `${banner}${diffUsage}`, exitCode: 1 };
      const lines = opts.get('U');
      const context = typeof lines === 'string' ? Number(lines) : 3;
      if (!/^\d+$/.test(typeof lines === 'string' ? lines : '3'))
        return { stdout: '', stderr: `diff: invalid number '${String(lines)}'\n`, exitCode: 2 };
      const options: Options = {
        flags: new Set([...opts.keys()].filter((k) => k.length === 1)),
        labels,
        start: typeof opts.get('S') === 'string' ? (opts.get('S') as string) : undefined,
        context,
      };
      const result = await compareOperands(ctx, operands[0]!, operands[1]!, options);
      return bytesOutput(Buffer.from(result.out, 'latin1'), result.err, result.status);
    },
  };
}

type Kind = 'file' | 'directory' | 'missing';

async function kindOf(ctx: CommandContext, name: string): Promise<Kind> {
  if (name === '-') return 'file';
  try {
    const st = await ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, name));
    return st.isDirectory ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

async function bytesOf(ctx: CommandContext, name: string | undefined): Promise<Buffer> {
  if (name === undefined) return Buffer.alloc(0);
  if (name === '-') return Buffer.from(String(ctx.stdin), 'latin1');
  return Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, name)));
}

/** Whether two operands name one file (busybox compares their inodes first and says nothing of it). */
async function sameFile(ctx: CommandContext, first: string, second: string): Promise<boolean> {
  if (first === '-' || second === '-') return false;
  const real = async (name: string): Promise<string | undefined> => ctx.fs.realpath(ctx.fs.resolvePath(ctx.cwd, name)).catch(() => undefined);
  const [r1, r2] = [await real(first), await real(second)];
  return r1 !== undefined && r1 === r2;
}

const joined = (dir: string, name: string): string => (dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`);

async function compareOperands(ctx: CommandContext, first: string, second: string, opts: Options): Promise<Outcome> {
  let [k1, k2] = [await kindOf(ctx, first), await kindOf(ctx, second)];
  for (const [name, kind] of [
    [first, k1],
    [second, k2],
  ] as const)
    if (kind === 'missing' && !opts.flags.has('N')) return { out: '', err: `diff: can't stat '${name}': No such file or directory\n`, status: 2 };
  if (k1 === 'directory' && k2 === 'directory') return compareDirectories(ctx, first, second, opts);
  // A file against a directory: the directory's file of the same name.
  if (k1 === 'directory' && k2 !== 'directory') {
    first = joined(first, posix.basename(second));
    k1 = await kindOf(ctx, first);
  } else if (k2 === 'directory' && k1 !== 'directory') {
    second = joined(second, posix.basename(first));
    k2 = await kindOf(ctx, second);
  }
  for (const [name, kind] of [
    [first, k1],
    [second, k2],
  ] as const)
    if (kind === 'missing' && !opts.flags.has('N')) return { out: '', err: `diff: can't stat '${name}': No such file or directory\n`, status: 2 };
  return compareFiles(ctx, [first, second], [k1 === 'missing' ? undefined : first, k2 === 'missing' ? undefined : second], opts);
}

/** Two files (an absent one, under -N, empty), shown by `names`. */
async function compareFiles(
  ctx: CommandContext,
  names: [string, string],
  paths: [string | undefined, string | undefined],
  opts: Options,
): Promise<Outcome> {
  let a: Buffer;
  let b: Buffer;
  try {
    [a, b] = [await bytesOf(ctx, paths[0]), await bytesOf(ctx, paths[1])];
  } catch (e) {
    return { out: '', err: `diff: ${(e as Error).message}\n`, status: 2 };
  }
  // -q says nothing of files that are the same, -s or not.
  if (paths[0] !== undefined && paths[1] !== undefined && (await sameFile(ctx, paths[0], paths[1]))) return { out: '', err: '', status: 0 };
  const same = (): Outcome => ({
    out: opts.flags.has('s') && !opts.flags.has('q') ? `Files ${names[0]} and ${names[1]} are identical\n` : '',
    err: '',
    status: 0,
  });
  const differ = (): Outcome => ({ out: `Files ${names[0]} and ${names[1]} differ\n`, err: '', status: 1 });
  if (a.equals(b)) return same();
  if (!opts.flags.has('a') && (a.includes(0) || b.includes(0))) return differ();
  const text = unified(linesOf(a), linesOf(b), names, opts);
  if (text === '') return same();
  return opts.flags.has('q') ? differ() : { out: text, err: '', status: 1 };
}

/** The names below a directory busybox compares: with -r its files (recursing where the other side has the directory too, or under -N), else its entries. */
async function listing(ctx: CommandContext, root: string, other: string, opts: Options, under = ''): Promise<string[]> {
  const names = (await ctx.fs.readdir(ctx.fs.resolvePath(ctx.cwd, under ? joined(root, under) : root))).sort();
  const found: string[] = [];
  for (const name of names) {
    const rel = under ? `${under}/${name}` : name;
    if (opts.flags.has('r') && (await kindOf(ctx, joined(root, rel))) === 'directory') {
      if (opts.flags.has('N') || (await kindOf(ctx, joined(other, rel))) === 'directory') found.push(...(await listing(ctx, root, other, opts, rel)));
      continue;
    }
    found.push(rel);
  }
  return found;
}

async function compareDirectories(ctx: CommandContext, first: string, second: string, opts: Options): Promise<Outcome> {
  const [left, right] = [new Set(await listing(ctx, first, second, opts)), new Set(await listing(ctx, second, first, opts))];
  const names = [...new Set([...left, ...right])].sort().filter((n) => opts.start === undefined || n >= opts.start);
  const total: Outcome = { out: '', err: '', status: 0 };
  const add = (o: Outcome): void => {
    total.out += o.out;
    total.err += o.err;
    total.status = Math.max(total.status, o.status);
  };
  const side = (root: string, rel: string): string => {
    const dir = posix.dirname(rel);
    return dir === '.' ? root : joined(root, dir);
  };
  for (const rel of names) {
    const [p1, p2] = [joined(first, rel), joined(second, rel)];
    const [k1, k2] = [left.has(rel) ? await kindOf(ctx, p1) : 'missing', right.has(rel) ? await kindOf(ctx, p2) : 'missing'];
    if (k1 === 'missing' || k2 === 'missing') {
      const present = k1 === 'missing' ? k2 : k1;
      if (opts.flags.has('N') && present === 'file') {
        const [n1, n2] = [k1 === 'missing' ? '/dev/null' : p1, k2 === 'missing' ? '/dev/null' : p2];
        add(await compareFiles(ctx, [n1, n2], [k1 === 'missing' ? undefined : p1, k2 === 'missing' ? undefined : p2], opts));
      } else add({ out: `Only in ${side(k1 === 'missing' ? second : first, rel)}: ${posix.basename(rel)}\n`, err: '', status: 1 });
    } else if (k1 === 'directory' && k2 === 'directory') add({ out: `Common subdirectories: ${p1} and ${p2}\n`, err: '', status: 0 });
    else if (k1 !== k2)
      add({
        out: `File ${p1} is a ${k1 === 'file' ? 'regular file' : 'directory'} while file ${p2} is a ${k2 === 'file' ? 'regular file' : 'directory'}\n`,
        err: '',
        status: 1,
      });
    else add(await compareFiles(ctx, [p1, p2], [p1, p2], opts));
  }
  return total;
}
