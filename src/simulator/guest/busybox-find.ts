import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { parseMode } from './busybox-coreutils.js';
import { mountOf } from './busybox-stat.js';
import { banner } from './busybox-getopt.js';
import { resolvePath, statusOf, type FileStatus } from './file-status.js';
import type { ProgramHost } from './program-host.js';
import { posixRegex, PosixRegexError } from './posix-regex.js';
import { ProgramOutput } from './program-output.js';
import { errnos } from './fs-error.js';
import { shellQuote } from './program-run.js';

const findUsage =
  'Usage: find [-HL] [PATH]... [OPTIONS] [ACTIONS]\n\nSearch for files and perform actions on them.\n' +
  "First failed action stops processing of current file.\nDefaults: PATH is current directory, action is '-print'\n\n" +
  "\t-L,-follow\tFollow symlinks\n\t-H\t\t...on command line only\n\t-xdev\t\tDon't descend directories on other filesystems\n" +
  '\t-maxdepth N\tDescend at most N levels. -maxdepth 0 applies\n\t\t\tactions to command line arguments only\n' +
  "\t-mindepth N\tDon't act on first N levels\n\t-depth\t\tAct on directory *after* traversing it\n\nActions:\n" +
  "\t( ACTIONS )\tGroup actions for -o / -a\n\t! ACT\t\tInvert ACT's success/failure\n\tACT1 [-a] ACT2\tIf ACT1 fails, stop, else do ACT2\n" +
  '\tACT1 -o ACT2\tIf ACT1 succeeds, stop, else do ACT2\n\t\t\tNote: -a has higher priority than -o\n' +
  '\t-name PATTERN\tMatch file name (w/o directory name) to PATTERN\n\t-iname PATTERN\tCase insensitive -name\n' +
  '\t-path PATTERN\tMatch path to PATTERN\n\t-ipath PATTERN\tCase insensitive -path\n\t-regex PATTERN\tMatch path to regex PATTERN\n' +
  '\t-type X\t\tFile type is X (one of: f,d,l,b,c,s,p)\n\t-executable\tFile is executable\n' +
  "\t-perm MASK\tAt least one mask bit (+MASK), all bits (-MASK),\n\t\t\tor exactly MASK bits are set in file's mode\n" +
  '\t-mtime DAYS\tmtime is greater than (+N), less than (-N),\n\t\t\tor exactly N days in the past\n' +
  '\t-atime DAYS\tatime +N/-N/N days in the past\n\t-ctime DAYS\tctime +N/-N/N days in the past\n' +
  '\t-mmin MINS\tmtime is greater than (+N), less than (-N),\n\t\t\tor exactly N minutes in the past\n' +
  "\t-amin MINS\tatime +N/-N/N minutes in the past\n\t-cmin MINS\tctime +N/-N/N minutes in the past\n\t-newer FILE\tmtime is more recent than FILE's\n" +
  '\t-inum N\t\tFile has inode number N\n\t-samefile FILE\tFile is same as FILE\n\t-user NAME/ID\tFile is owned by given user\n' +
  '\t-group NAME/ID\tFile is owned by given group\n\t-size N[bck]\tFile size is N (c:bytes,k:kbytes,b:512 bytes(def.))\n' +
  '\t\t\t+/-N: file size is bigger/smaller than N\n\t-links N\tNumber of links is greater than (+N), less than (-N),\n' +
  "\t\t\tor exactly N\n\t-empty\t\tMatch empty file/directory\n\t-prune\t\tIf current file is directory, don't descend into it\n" +
  'If none of the following actions is specified, -print is assumed\n\t-print\t\tPrint file name\n\t-print0\t\tPrint file name, NUL terminated\n' +
  '\t-exec CMD ARG ;\tRun CMD with all instances of {} replaced by\n\t\t\tfile name. Fails if CMD exits with nonzero\n' +
  '\t-exec CMD ARG + Run CMD with {} replaced by list of file names\n\t-quit\t\tExit\n';

/** recursive_action's and exec_actions' bits: TRUE the test held, SKIP do not descend (-prune, -maxdepth). */
const TRUE = 1;
const SKIP = 2;

/** A file find is looking at: the name it prints, the entry's status, its physical path. */
interface Visit {
  name: string;
  st: FileStatus;
  path: string;
}

interface Action {
  run(v: Visit): Promise<number>;
  invert: boolean;
}

/** `-o` groups of `-a` actions, as parse_params builds them. */
type Groups = Action[][];

/** A message find dies with (bb_error_msg_and_die), or with its usage too. */
class Died extends Error {
  constructor(
    message: string,
    readonly withUsage = false,
  ) {
    super(message);
  }
}

/** -quit: find exits at once (busybox's exit(), what -exec … + gathered left unrun). */
class Quit extends Error {}

/** A shell glob as fnmatch(3) without flags reads it (`*` and `?` match a leading dot and a slash too), `[…]` and `\` escapes. */
function globRegExp(pattern: string, caseFold: boolean): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let set = pattern.slice(i + 1, end);
      set = (set.startsWith('!') ? '^' + set.slice(1) : set).replace(/\\/g, '\\\\');
      re += `[${set}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, caseFold ? 'i' : '');
}

/**
 * A POSIX basic regular expression (regcomp without REG_EXTENDED, glibc's) as a JavaScript one
 * matching the whole path; find dies with regcomp's refusal (`bad regex 'RE': why`).
 */
function basicRegExp(pattern: string): RegExp {
  try {
    const { re } = posixRegex(pattern);
    return new RegExp(`^(?:${re.source})$`, re.flags.replace('g', ''));
  } catch (e) {
    if (e instanceof PosixRegexError) throw new Died(`bad regex '${pattern}': ${e.message}`);
    throw e;
  }
}

/** xatoi_positive / xatoul: digits only, else `invalid number`. */
function number(text: string): number {
  if (!/^\d+$/.test(text)) throw new Died(`invalid number '${text}'`);
  return Number(text);
}

/** `+N`, `-N` or `N`, with what the comparison is. */
function signed(text: string): [string, number] {
  const sign = text[0] === '+' || text[0] === '-' ? text[0] : '';
  return [sign, number(sign ? text.slice(1) : text)];
}

/**
 * busybox 1.35's `find` over the guest's files, where just-bash's knew only `-type f` and `d` and
 * no symlinks: -H, -L (-follow), -P; -xdev, -maxdepth, -mindepth, -depth; ( ) ! -not -a -and -o -or;
 * -name -iname -path -ipath -regex -type -executable -perm -mtime -atime -ctime -mmin -amin -cmin
 * -newer -inum -samefile -user -group -size -links -empty -prune -print -print0 -exec ; + -quit.
 * It parses its expression as busybox's parse_params (groups ORed, actions ANDed, `!` inverting the
 * next action), walks as recursive_action (a dangling link under -L is itself, a symlink loop is
 * ELOOP, `Too many levels of symbolic links`), and words its refusals as busybox does.
 */
export function busyboxFind(host: ProgramHost): Command {
  return { name: 'find', execute: (args, ctx) => find(host, args, ctx) };
}

async function find(host: ProgramHost, argv: string[], ctx: CommandContext): Promise<ExecResult> {
  const out = new ProgramOutput();
  let status = 0;
  let followAll = false;
  let followTop = false;
  let depthFirst = false;
  let xdev = false;
  let minDepth = 0;
  let maxDepth = Number.MAX_SAFE_INTEGER;
  let needPrint = true;
  const plus: { argv: string[]; names: string[] }[] = [];
  const now = Date.now();
  const memory = host.fs.memory;

  let i = 0;
  for (; i < argv.length && /^-[HLP]+$/.test(argv[i]!); i++) {
    if (argv[i]!.includes('L')) followAll = true;
    if (argv[i]!.includes('H')) followTop = true;
  }
  const paths: string[] = [];
  for (; i < argv.length && !argv[i]!.startsWith('-') && argv[i] !== '!' && argv[i] !== '('; i++) paths.push(argv[i]!);
  if (paths.length === 0) paths.push('.');

  /** The status of a file the expression names (-newer, -samefile): `can't stat` when it is not there. */
  const named = async (file: string): Promise<FileStatus> => {
    const at = await resolvePath(memory, posix.resolve(ctx.cwd, file), true);
    const st = 'path' in at ? await statusOf(host.fs, at.path, false) : undefined;
    if (!st) throw new Died(`can't stat '${file}': ${errnos['errno' in at ? at.errno : 'ENOENT']}`);
    return st;
  };
  const idOf = async (file: '/etc/passwd' | '/etc/group', name: string): Promise<number | undefined> => {
    if (/^\d+$/.test(name)) return Number(name);
    const text = await memory.readFile(file).catch(() => '');
    const line = text.split('\n').find((l) => l.split(':')[0] === name);
    return line ? Number(line.split(':')[2]) : undefined;
  };

  const parse = async (tokens: string[]): Promise<Groups> => {
    const groups: Groups = [[]];
    let invert = false;
    const add = (run: Action['run']): void => {
      groups[groups.length - 1]!.push({ run, invert });
      invert = false;
    };
    for (let k = 0; k < tokens.length; k++) {
      const arg = tokens[k]!;
      const withArg = [
        '-name',
        '-iname',
        '-path',
        '-ipath',
        '-regex',
        '-type',
        '-perm',
        '-mtime',
        '-atime',
        '-ctime',
        '-mmin',
        '-amin',
        '-cmin',
        '-newer',
        '-inum',
        '-samefile',
        '-user',
        '-group',
        '-size',
        '-links',
        '-maxdepth',
        '-mindepth',
        '-exec',
      ];
      let value = '';
      if (withArg.includes(arg)) {
        if (k + 1 >= tokens.length) throw new Died(`${arg} requires an argument`);
        if (arg !== '-exec') value = tokens[++k]!;
      }
      if (arg === '-follow') followAll = true;
      else if (arg === '-xdev') xdev = true;
      else if (arg === '-depth') depthFirst = true;
      else if (arg === '-maxdepth') maxDepth = number(value);
      else if (arg === '-mindepth') minDepth = number(value);
      else if (arg === '-a' || arg === '-and') continue;
      else if (arg === '-o' || arg === '-or') groups.push([]);
      else if (arg === '!' || arg === '-not') invert = !invert;
      else if (arg === '-print' || arg === '-print0') {
        needPrint = false;
        const end = arg === '-print' ? '\n' : '\0';
        add(async (v) => (out.out(v.name + end), TRUE));
      } else if (arg === '-prune') add(async () => SKIP | TRUE);
      else if (arg === '-quit')
        add(async () => {
          throw new Quit();
        });
      else if (arg === '-exec') {
        needPrint = false;
        const start = k + 1;
        let end = start;
        while (end < tokens.length && !(tokens[end] === ';' || tokens[end] === '+')) end++;
        if (end >= tokens.length || end === start) throw new Died('-exec requires an argument');
        const command = tokens.slice(start, end);
        k = end;
        if (tokens[end] === '+') {
          const batch = { argv: command, names: [] as string[] };
          plus.push(batch);
          add(async (v) => (batch.names.push(v.name), TRUE));
        } else add(async (v) => ((await run(command.map((a) => a.replaceAll('{}', v.name)))) === 0 ? TRUE : 0));
      } else if (arg === '(') {
        let nested = 1;
        let end = k;
        for (;;) {
          if (++end >= tokens.length) throw new Died("unpaired '('");
          if (tokens[end] === '(') nested++;
          else if (tokens[end] === ')' && --nested === 0) break;
        }
        const sub = await parse(tokens.slice(k + 1, end));
        k = end;
        add((v) => evaluate(sub, v));
      } else if (arg === '-name' || arg === '-iname') {
        const re = globRegExp(value, arg === '-iname');
        add(async (v) => {
          // busybox matches a trailing-slash name (`dir/`) by its last component.
          const trimmed = v.name.length > 1 ? v.name.replace(/\/+$/, '') : v.name;
          return re.test(trimmed.slice(trimmed.lastIndexOf('/') + 1) || trimmed) ? TRUE : 0;
        });
      } else if (arg === '-path' || arg === '-ipath') {
        const re = globRegExp(value, arg === '-ipath');
        add(async (v) => (re.test(v.name) ? TRUE : 0));
      } else if (arg === '-regex') {
        const re = basicRegExp(value);
        add(async (v) => (re.test(v.name) ? TRUE : 0));
      } else if (arg === '-type') {
        const kind = { f: 'file', d: 'directory', l: 'symlink', b: 'block', c: 'char', s: 'socket', p: 'fifo' }[value];
        if (value.length !== 1 || !kind) throw new Died(`invalid argument '${value}' to '-type'`);
        add(async (v) => (v.st.type === kind ? TRUE : 0));
      } else if (arg === '-executable') {
        add(async (v) => {
          if (host.uid === 0) return v.st.type === 'directory' || (v.st.perm & 0o111) !== 0 ? TRUE : 0;
          const bit = v.st.uid === host.uid ? 0o100 : v.st.gid === host.gid ? 0o010 : 0o001;
          return v.st.perm & bit ? TRUE : 0;
        });
      } else if (arg === '-perm') {
        const how = value[0] === '-' || value[0] === '/' || value[0] === '+' ? value[0] : '';
        const mode = parseMode(how ? value.slice(1) : value, 0);
        if (mode === undefined) throw new Died(`invalid mode '${value}'`);
        add(async (v) => {
          const m = v.st.perm & 0o7777;
          return (how === '-' ? (m & mode) === mode : how ? (m & mode) !== 0 : m === mode) ? TRUE : 0;
        });
      } else if (['-mtime', '-atime', '-ctime', '-mmin', '-amin', '-cmin'].includes(arg)) {
        const [sign, n] = signed(value);
        const unit = arg.endsWith('min') ? 60 : 24 * 60 * 60;
        add(async (v) => {
          const t = v.st.times[arg[1] === 'a' ? 'atime' : arg[1] === 'c' ? 'ctime' : 'mtime'];
          const age = Math.floor(now / 1000) - Number(t / 1_000_000_000n);
          const held = sign === '+' ? age >= n * unit + unit : sign === '-' ? age < n * unit : age >= n * unit && age < n * unit + unit;
          return held ? TRUE : 0;
        });
      } else if (arg === '-newer') {
        const than = Math.floor((await named(value)).mtime.getTime() / 1000);
        add(async (v) => (Math.floor(v.st.mtime.getTime() / 1000) > than ? TRUE : 0));
      } else if (arg === '-inum') {
        const n = number(value);
        add(async (v) => (v.st.ino === n ? TRUE : 0));
      } else if (arg === '-samefile') {
        const same = await named(value);
        add(async (v) => (v.st.ino === same.ino ? TRUE : 0));
      } else if (arg === '-user' || arg === '-group') {
        const id = await idOf(arg === '-user' ? '/etc/passwd' : '/etc/group', value);
        if (id === undefined) throw new Died(`unknown ${arg.slice(1)} ${value}`);
        add(async (v) => ((arg === '-user' ? v.st.uid : v.st.gid) === id ? TRUE : 0));
      } else if (arg === '-size') {
        const sign = value[0] === '+' || value[0] === '-' ? value[0] : '';
        const m = /^(\d+)([cwbk]?)$/.exec(sign ? value.slice(1) : value);
        if (!m) throw new Died(`invalid number '${sign ? value.slice(1) : value}'`);
        const bytes = Number(m[1]) * { c: 1, w: 2, b: 512, k: 1024, '': 512 }[m[2] as 'c' | 'w' | 'b' | 'k' | ''];
        add(async (v) => ((sign === '+' ? v.st.size > bytes : sign === '-' ? v.st.size < bytes : v.st.size === bytes) ? TRUE : 0));
      } else if (arg === '-links') {
        const [sign, n] = signed(value);
        add(async (v) => ((sign === '+' ? v.st.nlink > n : sign === '-' ? v.st.nlink < n : v.st.nlink === n) ? TRUE : 0));
      } else if (arg === '-empty') {
        add(async (v) => {
          if (v.st.type === 'directory') return (await memory.readdir(v.path)).length === 0 ? TRUE : 0;
          return v.st.type === 'file' && v.st.size === 0 ? TRUE : 0;
        });
      } else throw new Died(`unrecognized: ${arg}`, true);
    }
    return groups;
  };

  /** exec_actions: the first group whose actions all hold; -prune's SKIP kept whatever the outcome. */
  const evaluate = async (groups: Groups, v: Visit): Promise<number> => {
    let rc = 0;
    for (const group of groups) {
      rc &= ~TRUE;
      let failed = false;
      for (const action of group) {
        rc |= TRUE ^ (await action.run(v));
        if (action.invert) rc ^= TRUE;
        if (rc & TRUE) {
          failed = true;
          break;
        }
      }
      if (!failed) return rc ^ TRUE;
    }
    return rc ^ TRUE;
  };

  /** Runs a command for -exec with the guest's shell: its exit status; its output is find's. */
  const run = async (command: string[]): Promise<number> => {
    const quoted = command.map(shellQuote).join(' ');
    const r = await ctx.exec!(quoted, { cwd: ctx.cwd });
    out.append(r);
    return r.exitCode;
  };

  let groups: Groups;
  try {
    groups = await parse(argv.slice(i));
  } catch (e) {
    if (!(e instanceof Died)) throw e;
    return { stdout: '', stderr: `find: ${e.message}\n${e.withUsage ? banner + findUsage : ''}`, exitCode: 1 };
  }

  /** The filesystems the paths start on: -xdev descends no directory of another (a mount point is itself acted on). */
  const startMounts = new Set<string>();
  /** fileAction: -xdev, -mindepth and -maxdepth, the expression, the implied -print. */
  const fileAction = async (v: Visit, depth: number): Promise<number> => {
    if (depth === 0) startMounts.add(mountOf(v.path));
    const sameFs = !xdev || v.st.type !== 'directory' || startMounts.has(mountOf(v.path));
    if (depth < minDepth) return sameFs ? TRUE : SKIP;
    if (depth > maxDepth) return SKIP;
    const r = await evaluate(groups, v);
    if (r & TRUE && needPrint) out.out(`${v.name}\n`);
    if (depth === maxDepth || !sameFs) return SKIP;
    return r & SKIP ? SKIP : TRUE;
  };

  /** recursive_action: false when the path could not be reached or read (perror'd). */
  const walk = async (name: string, depth: number): Promise<boolean> => {
    const abs = posix.resolve(ctx.cwd, name);
    const follow = followAll || (followTop && depth === 0);
    let at = await resolvePath(memory, name.endsWith('/') ? abs + '/' : abs, follow);
    // A dangling symlink followed is itself (ACTION_DANGLING_OK).
    if ('errno' in at && at.errno === 'ENOENT' && follow) {
      const link = await resolvePath(memory, abs, false);
      if ('path' in link) at = link;
    }
    const st = 'path' in at ? await statusOf(host.fs, at.path, false) : undefined;
    if (!st || !('path' in at)) {
      out.err(`find: ${name}: ${errnos['errno' in at ? at.errno : 'ENOENT']}\n`);
      return false;
    }
    const v: Visit = { name, st, path: at.path };
    if (st.type !== 'directory') return (await fileAction(v, depth)) !== 0;
    if (!depthFirst) {
      const r = await fileAction(v, depth);
      if (r === SKIP) return true;
    }
    let ok = true;
    const entries = await memory.readdir(at.path).catch(() => undefined);
    if (!entries) {
      // opendir(3) refused (no read permission): perror'd after the directory itself is acted on.
      out.err(`find: ${name}: ${errnos.EACCES}\n`);
      ok = false;
    }
    for (const entry of entries ?? []) {
      if (!(await walk(name.endsWith('/') ? `${name}${entry}` : `${name}/${entry}`, depth + 1))) ok = false;
    }
    if (depthFirst) await fileAction(v, depth);
    return ok;
  };

  try {
    for (const path of paths) if (!(await walk(path, 0))) status = 1;
  } catch (e) {
    if (!(e instanceof Quit)) throw e;
    return out.result(status);
  }
  for (const batch of plus) {
    if (batch.names.length === 0) continue;
    const exit = await run(batch.argv.flatMap((a) => (a === '{}' ? batch.names : [a])));
    if (exit !== 0) status = 1;
  }
  return out.result(status);
}
