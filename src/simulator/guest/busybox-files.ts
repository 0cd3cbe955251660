import { machine } from 'node:os';
import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { execFailure } from './program-output.js';
import { timeCommand } from './busybox-time.js';
import { timeoutCommand } from './busybox-timeout.js';
import type { GuestFs } from './guest-fs.js';
import { busyboxArchives } from './busybox-archives.js';
import { busyboxCalc } from './busybox-calc.js';
import { busyboxFind } from './busybox-find.js';
import { sedCommand } from './busybox-sed.js';
import { cutCommand } from './busybox-cut.js';
import { odCommand } from './busybox-od.js';
import { hexdumpCommand, xxdCommand, type ReadInput } from './busybox-hexdump.js';
import { awkCommand } from './busybox-awk.js';
import { grepCommand } from './busybox-grep.js';
import { busyboxShuf } from './busybox-shuf.js';
import { busyboxUniq } from './busybox-uniq.js';
import { sortCommand } from './busybox-sort.js';
import { busyboxLz } from './busybox-lz.js';
import { busyboxEditors } from './busybox-edit.js';
import { busyboxMisc } from './busybox-misc.js';
import { mkpasswdCommand } from './busybox-mkpasswd.js';
import { busyboxNodes } from './busybox-nodes.js';
import { busyboxPackages } from './busybox-packages.js';
import { busyboxPatch } from './busybox-patch.js';
import { diffCommand } from './busybox-diff.js';
import { busyboxTables } from './busybox-tables.js';
import { isRefusal } from './guest-access.js';
import { busyboxReads } from './busybox-reads.js';
import { duCommand } from './busybox-du.js';
import { bytesOutput } from './bytes-output.js';
import { errnos, type Errno } from './fs-error.js';
import { execProgram } from './program-run.js';
import { suCommand } from './busybox-su.js';

/** What the programs below need to know about the command running them. */
export interface FilesHost {
  fs: GuestFs;
  uid: number;
  gid: number;
  /** The process's umask as its shell has it now (default 022). */
  umask?: () => number;
}

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** The bytes of a file operand (`-` or none: stdin), or the message busybox prints for it. */
async function input(host: FilesHost, ctx: CommandContext, program: string, file: string | undefined): Promise<Buffer | string> {
  if (file === undefined || file === '-') return Buffer.from(String(ctx.stdin), 'latin1');
  const path = posix.resolve(ctx.cwd, file);
  const entry = await host.fs.entry(path);
  if (!entry) return `${program}: ${file}: No such file or directory\n`;
  if (entry.type === 'directory') return `${program}: ${file}: Is a directory\n`;
  return host.fs.read(path).catch((e: unknown) => {
    const why = isRefusal(e) ? errnos.EACCES : errnos[(e as { code?: string }).code as Errno];
    return why ? `${program}: ${file}: ${why}\n` : Promise.reject(e);
  });
}

const cmpUsage =
  'Usage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n' +
  '\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\n';

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const printable = (b: number): string => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.');

/**
 * More busybox programs scripts use on files that just-bash lacks: `chgrp`, `cmp`, `link`,
 * `dos2unix`/`unix2dos`, `hexdump` (`-C` and the default), `xxd`, `od` (busybox-od.ts), `more`/`less` (no terminal:
 * the file as it is), `arch`, `su` (root runs `-c CMD` or its stdin as root; busybox is not setuid,
 * so no one else can) and `setsid`. Their output and messages are busybox 1.35's on the test beds.
 */
export function busyboxFiles(host: FilesHost): Command[] {
  const chgrp: Command = {
    name: 'chgrp',
    async execute(args, ctx) {
      const recursive = args.some((a) => /^-[a-zA-Z]*R/.test(a));
      const [group, ...files] = args.filter((a) => !a.startsWith('-'));
      if (group === undefined || files.length === 0) return fail(`${banner}Usage: chgrp [-RhLHPcvf]... GROUP FILE...\n`);
      const groups = await ctx.fs.readFile('/etc/group').catch(() => '');
      const line = groups
        .split('\n')
        .map((l) => l.split(':'))
        .find((f) => f[0] === group);
      const gid = line ? Number(line[2]) : /^\d+$/.test(group) ? Number(group) : undefined;
      if (gid === undefined) return fail(`chgrp: unknown group ${group}\n`);
      let stderr = '';
      const apply = async (path: string, shown: string): Promise<void> => {
        const entry = await host.fs.entry(path);
        if (!entry) return void (stderr += `chgrp: ${shown}: No such file or directory\n`);
        if (host.uid !== 0) return void (stderr += `chgrp: ${shown}: Operation not permitted\n`);
        await host.fs.setMeta(path, { uid: entry.uid, gid, mode: entry.mode });
        if (recursive && entry.type === 'directory')
          for (const name of await host.fs.list(path)) await apply(posix.join(path, name), posix.join(shown, name));
      };
      for (const f of files) await apply(posix.resolve(ctx.cwd, f), f);
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  /**
   * busybox 1.35's cmp (editors/cmp.c): `-l` lists each differing byte (its number, then both
   * values in octal) and `-s` says nothing, the two refusing each other; `-n NUM` compares at most
   * NUM bytes; SKIP1 and SKIP2 skip bytes of each file; a file that ends first is `cmp: EOF on
   * FILE` on stderr; status 1 when they differ, 2 when a file does not open.
   */
  const cmp: Command = {
    name: 'cmp',
    async execute(args, ctx) {
      const parsed = getopt('cmp', cmpUsage, args, 'ls', 'n');
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      if (operands.length < 1 || operands.length > 4 || (opts.has('l') && opts.has('s'))) return fail(`${banner}${cmpUsage}`);
      const count = (text: string): number | ExecResult => (/^\d+$/.test(text) ? Number(text) : fail(`cmp: invalid number '${text}'\n`));
      const limit = opts.has('n') ? count(opts.get('n') as string) : undefined;
      if (typeof limit === 'object') return limit;
      const skips = operands.slice(2).map(count);
      const refused = skips.find((s): s is ExecResult => typeof s === 'object');
      if (refused) return refused;
      const silent = opts.has('s');
      const [f1, f2 = '-'] = operands as [string, string?];
      const a = await input(host, ctx, 'cmp', f1);
      if (typeof a === 'string') return fail(silent ? '' : a, 2);
      const b = await input(host, ctx, 'cmp', f2);
      if (typeof b === 'string') return fail(silent ? '' : b, 2);
      // cmp - - reads nothing: the same stream.
      if (f1 === '-' && f2 === '-') return ok();
      const [x, y] = [a.subarray((skips[0] as number | undefined) ?? 0), b.subarray((skips[1] as number | undefined) ?? 0)];
      const end = Math.min(Math.max(x.length, y.length), limit ?? Infinity);
      let stdout = '';
      let line = 1;
      for (let at = 0; at < end; at++) {
        if (at >= x.length || at >= y.length) {
          if (!silent) return { stdout, stderr: `cmp: EOF on ${at >= x.length ? f1 : f2}\n`, exitCode: 1 };
          return fail('');
        }
        const [c1, c2] = [x[at]!, y[at]!];
        if (c1 !== c2) {
          if (silent) return fail('');
          if (!opts.has('l')) return { stdout: `${f1} ${f2} differ: char ${at + 1}, line ${line}\n`, stderr: '', exitCode: 1 };
          stdout += `${at + 1} ${c1.toString(8).padStart(3)} ${c2.toString(8).padStart(3)}\n`;
        } else if (c1 === 0x0a) line++;
      }
      return { stdout, stderr: '', exitCode: stdout ? 1 : 0 };
    },
  };
  const link: Command = {
    name: 'link',
    async execute(args, ctx) {
      if (args.length !== 2) return fail(`${banner}Usage: link FILE LINK\n`);
      const [from, to] = args as [string, string];
      const target = posix.resolve(ctx.cwd, to);
      const source = posix.resolve(ctx.cwd, from);
      const why = (await host.fs.entry(target))
        ? 'File exists'
        : (await host.fs.entry(source))?.type === 'file'
          ? undefined
          : (await host.fs.entry(source))
            ? 'Operation not permitted'
            : 'No such file or directory';
      if (why) return fail(`link: can't create hardlink '${to}' to '${from}': ${why}\n`);
      await ctx.fs.link(source, target);
      return ok();
    },
  };
  const lineEnds = (name: string, toDos: boolean): Command => ({
    name,
    async execute(args, ctx) {
      const files = args.filter((a) => !a.startsWith('-'));
      const convert = (data: Buffer): Buffer => {
        const text = data.toString('latin1').replace(/\r\n/g, '\n');
        return Buffer.from(toDos ? text.replace(/\n/g, '\r\n') : text, 'latin1');
      };
      if (files.length === 0) {
        return bytesOutput(convert(Buffer.from(String(ctx.stdin), 'latin1')));
      }
      // With files, each is converted in place.
      for (const f of files) {
        const data = await input(host, ctx, name, f);
        if (typeof data === 'string') return fail(data);
        const path = posix.resolve(ctx.cwd, f);
        const entry = (await host.fs.entry(path))!;
        await host.fs.write(path, convert(data), { uid: entry.uid, gid: entry.gid, mode: entry.mode });
      }
      return ok();
    },
  });
  const read: ReadInput = (ctx, program, file) => input(host, ctx, program, file);
  const hexdump = hexdumpCommand(read);
  const xxd = xxdCommand(read);
  const pager = (name: string): Command => ({
    name,
    async execute(args, ctx) {
      // Not on a terminal (exec without one): busybox's pagers copy their input as it is.
      let out = '';
      for (const f of args.filter((a) => !a.startsWith('-')).concat(args.some((a) => !a.startsWith('-')) ? [] : ['-'])) {
        const data = await input(host, ctx, name, f);
        if (typeof data === 'string') return { stdout: out, stderr: data, exitCode: 1 };
        out += data.toString('utf8');
      }
      return ok(out);
    },
  });
  const arch: Command = { name: 'arch', execute: async () => ok(`${machine()}\n`) };
  const su = suCommand(host);
  const setsid: Command = {
    name: 'setsid',
    async execute(args, ctx) {
      const argv = args.filter((a, i) => !(i === 0 && a.startsWith('-')));
      if (argv.length === 0) return fail(`${banner}Usage: setsid [-c] PROG ARGS\n`);
      return execProgram(ctx, argv, (why) => `setsid: can't execute '${argv[0]}': ${why}\n`);
    },
  };
  // just-bash's env, with busybox's words for a program it cannot run.
  const env: Command = {
    name: 'env',
    async execute(args, ctx) {
      if (!ctx.origCommand) return fail('sh: env: not found\n', 127);
      // getopt ends the options at `--`, which just-bash's env refuses ('unrecognized option').
      const { dashes, word } = envLine(args);
      const result = await ctx.origCommand(dashes !== undefined ? [...args.slice(0, dashes), ...args.slice(dashes + 1)] : args);
      return word === undefined ? result : execFailure(result, word, (why) => `env: can't execute '${word}': ${why}\n`);
    },
  };
  return [
    env,
    timeCommand(),
    timeoutCommand(),
    chgrp,
    cmp,
    link,
    lineEnds('dos2unix', false),
    lineEnds('unix2dos', true),
    hexdump,
    xxd,
    odCommand(),
    pager('more'),
    pager('less'),
    arch,
    su,
    setsid,
    ...busyboxArchives(host),
    ...busyboxReads(host),
    duCommand(host),
    ...busyboxNodes(host),
    busyboxPatch(host),
    diffCommand(),
    ...busyboxMisc(host),
    ...busyboxTables(host),
    mkpasswdCommand(),
    ...busyboxEditors(host),
    ...busyboxPackages(host),
    ...busyboxLz(host),
    ...busyboxCalc(host),
    busyboxFind(host),
    sedCommand(host),
    cutCommand(host),
    grepCommand(),
    awkCommand(),
    sortCommand(host),
    busyboxShuf(host),
    busyboxUniq(host),
  ];
}

/**
 * env's command line: where `--` ends its options (if it does), and the program it runs, the first
 * operand after its options (`-u NAME` takes a value) and the NAME=VALUE settings.
 */
function envLine(args: string[]): { dashes?: number; word?: string } {
  let dashes: number | undefined;
  let k = 0;
  for (; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--') {
      dashes = k++;
      break;
    }
    if (a === '-u') k++;
    else if (a === '-' || !a.startsWith('-')) break;
  }
  while (k < args.length && (args[k] === '-' || args[k]!.includes('='))) k++;
  return { dashes, word: args[k] };
}
