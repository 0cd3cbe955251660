import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { Files } from './busybox-file-calls.js';
import { banner } from './busybox-getopt.js';
import { mountOf } from './busybox-stat.js';
import { statusOf, type FileStatus } from './file-status.js';
import { isRefusal } from './guest-access.js';
import type { ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';
import { errnos } from './fs-error.js';

const usage =
  `${banner}Usage: du [-aHLdclsxhmk] [FILE]...\n\nSummarize disk space used for FILEs (or directories)\n\n` +
  '\t-a\tShow file sizes too\n\t-b\tApparent size (including holes)\n\t-L\tFollow all symlinks\n' +
  '\t-H\tFollow symlinks on command line\n\t-d N\tLimit output to directories (and files with -a) of depth < N\n' +
  '\t-c\tShow grand total\n\t-l\tCount sizes many times if hard linked\n\t-s\tDisplay only a total for each argument\n' +
  '\t-x\tSkip directories on different filesystems\n\t-h\tSizes in human readable format (e.g., 1K 243M 2G)\n' +
  '\t-m\tSizes in megabytes\n\t-k\tSizes in kilobytes (default)\n';

/**
 * busybox's make_human_readable_str: `val` units of `blockSize` bytes in units of `displayUnit`
 * (rounded to nearest), or with none one decimal and a suffix (`12.0K`, `2.9M`).
 */
export function humanReadable(val: bigint, blockSize: bigint, displayUnit: bigint): string {
  if (val === 0n) return '0';
  let v = val * (blockSize > 1n ? blockSize : 1n);
  if (displayUnit !== 0n) return String((v + displayUnit / 2n) / displayUnit);
  const units = ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
  let u = 0;
  let frac = 0n;
  while (v >= 1024n) {
    u++;
    frac = ((v % 1024n) * 10n + 512n) / 1024n;
    v /= 1024n;
  }
  if (frac >= 10n) {
    v++;
    frac = 0n;
  }
  return u === 0 ? String(v) : `${v}.${frac}${units[u]}`;
}

interface Options {
  all: boolean;
  apparent: boolean;
  /** Symlinks are followed while the depth is below this (-H: 1, -L: all). */
  followBelow: number;
  maxDepth: number;
  total: boolean;
  countLinks: boolean;
  oneFs: boolean;
  /** Bytes a printed unit is (-k, -m; default 1024, or 1 with -b); 0: human-readable (-h). */
  unit?: bigint;
}

/** getopt32's `aHkLsxd:+lchmb` with its exclusions (the last of -h, -k, -m wins, of -H and -L, of -s and -d). */
function parse(args: string[]): { options: Options; files: string[] } | ExecResult {
  const o: Options = {
    all: false,
    apparent: false,
    followBelow: 0,
    maxDepth: Infinity,
    total: false,
    countLinks: false,
    oneFs: false,
  };
  const files: string[] = [];
  let operandsOnly = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (operandsOnly || !a.startsWith('-') || a === '-') {
      files.push(a);
      continue;
    }
    if (a === '--') {
      operandsOnly = true;
      continue;
    }
    if (a.startsWith('--')) return { stdout: '', stderr: `du: unrecognized option '${a}'\n${usage}`, exitCode: 1 };
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (c === 'd') {
        const value = j + 1 < a.length ? a.slice(j + 1) : args[++i];
        if (value === undefined) return { stdout: '', stderr: `du: option requires an argument -- 'd'\n${usage}`, exitCode: 1 };
        if (!/^\d+$/.test(value)) return { stdout: '', stderr: `du: invalid number '${value}'\n`, exitCode: 1 };
        o.maxDepth = Number(value);
        break;
      }
      if (c === 'a') o.all = true;
      else if (c === 'b') o.apparent = true;
      else if (c === 'H') o.followBelow = 1;
      else if (c === 'L') o.followBelow = Infinity;
      else if (c === 's') o.maxDepth = 0;
      else if (c === 'x') o.oneFs = true;
      else if (c === 'l') o.countLinks = true;
      else if (c === 'c') o.total = true;
      else if (c === 'h') o.unit = 0n;
      else if (c === 'm') o.unit = 1024n * 1024n;
      else if (c === 'k') o.unit = 1024n;
      else return { stdout: '', stderr: `du: invalid option -- '${c}'\n${usage}`, exitCode: 1 };
    }
  }
  return { options: o, files: files.length ? files : ['.'] };
}

/**
 * busybox's `du` (coreutils/du.c) over the guest's files, as the command's user sees them: each
 * entry's 512-byte blocks as ext4 allocates them (or its bytes with -b), a file with more than one
 * name (and a directory) counted once over all operands, a directory it may not list said (`can't
 * open 'D': Permission denied`) and counted without its entries, status 1 for any failure.
 */
export function duCommand(host: ProgramHost): Command {
  return {
    name: 'du',
    async execute(args, ctx: CommandContext) {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      const parsed = parse(args);
      if ('exitCode' in parsed) return parsed;
      const { options: o, files } = parsed;
      const files$ = new Files(ctx.fs, ctx.cwd);
      const seen = new Set<number>();
      const out = new ProgramOutput();
      let failed = false;
      let followBelow = o.followBelow;
      const print = (size: bigint, name: string): void => {
        // busybox rounds a fixed unit up (as coreutils), a human-readable size to nearest.
        const unit = o.unit ?? (o.apparent ? 1n : 1024n);
        const rounded = unit !== 0n && !o.apparent ? size + (unit - 1n) / 1024n : size;
        out.out(`${humanReadable(rounded, o.apparent ? 1n : 512n, unit)}\t${name}\n`);
      };
      const perror = async (name: string): Promise<void> => {
        out.err(`du: ${name}: ${errnos[await files$.missing(name)]}\n`);
        failed = true;
      };
      const du = async (name: string, depth: number, startFs: string): Promise<bigint> => {
        const path = files$.abs(name);
        let st: FileStatus | undefined = await statusOf(host.fs, path, false);
        if (!st) return perror(name).then(() => 0n);
        if (st.type === 'symlink' && followBelow > depth) {
          st = await statusOf(host.fs, path, true);
          if (!st) return perror(name).then(() => 0n);
          // busybox turns -H into -L once it has followed one.
          if (followBelow === 1) followBelow = Infinity;
        }
        let sum = o.apparent ? BigInt(st.size) : BigInt(st.blocks);
        if (!o.countLinks && st.nlink > 1) {
          if (seen.has(st.ino)) return 0n;
          seen.add(st.ino);
        }
        if (st.type === 'directory') {
          if (o.oneFs && depth > 0 && mountOf(path) !== startFs) return sum;
          let names: string[];
          try {
            names = await host.fs.list(await host.fs.memory.realpath(path));
          } catch (e) {
            if (!isRefusal(e)) throw e;
            out.err(`du: can't open '${name}': Permission denied\n`);
            failed = true;
            return sum;
          }
          for (const entry of names) sum += await du(name.endsWith('/') ? `${name}${entry}` : `${name}/${entry}`, depth + 1, startFs);
        } else if (!o.all && depth !== 0) return sum;
        if (depth <= o.maxDepth) print(sum, name);
        return sum;
      };
      let total = 0n;
      for (const f of files) total += await du(f, 0, mountOf(posix.resolve(ctx.cwd, f)));
      if (o.total) print(total, 'total');
      return out.result(failed ? 1 : 0);
    },
  };
}
