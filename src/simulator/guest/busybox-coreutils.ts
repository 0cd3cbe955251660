import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';

const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';

/** Each program's usage, as busybox prints it (to stderr, exit 1) for a wrong call. */
const usages: Record<string, string> = {
  rm: 'Usage: rm [-irf] FILE...\n\nRemove (unlink) FILEs\n\n\t-i\tAlways prompt before removing\n\t-f\tNever prompt\n\t-R,-r\tRecurse\n',
  rmdir: 'Usage: rmdir [-p] DIRECTORY...\n\nRemove DIRECTORY if it is empty\n\n\t-p\tInclude parents\n\t--ignore-fail-on-non-empty\n',
  mv:
    'Usage: mv [-finT] SOURCE DEST\nor: mv [-fin] SOURCE... { -t DIRECTORY | DIRECTORY }\n\nRename SOURCE to DEST, or move SOURCEs to DIRECTORY\n\n' +
    "\t-f\tDon't prompt before overwriting\n\t-i\tInteractive, prompt before overwrite\n\t-n\tDon't overwrite an existing file\n" +
    '\t-T\tRefuse to move if DEST is a directory\n\t-t DIR\tMove all SOURCEs into DIR\n',
  cp:
    'Usage: cp [-arPLHpfinlsTu] SOURCE DEST\nor: cp [-arPLHpfinlsu] SOURCE... { -t DIRECTORY | DIRECTORY }\n\nCopy SOURCEs to DEST\n\n' +
    '\t-a\tSame as -dpR\n\t-R,-r\tRecurse\n\t-d,-P\tPreserve symlinks (default if -R)\n\t-L\tFollow all symlinks\n' +
    '\t-H\tFollow symlinks on command line\n\t-p\tPreserve file attributes if possible\n\t-f\tOverwrite\n\t-i\tPrompt before overwrite\n' +
    "\t-n\tDon't overwrite\n\t-l,-s\tCreate (sym)links\n\t-T\tRefuse to copy if DEST is a directory\n\t-t DIR\tCopy all SOURCEs into DIR\n" +
    '\t-u\tCopy only newer files\n',
  touch:
    'Usage: touch [-cham] [-d DATE] [-t DATE] [-r FILE] FILE...\n\nUpdate mtime of FILEs\n\n' +
    "\t-c\tDon't create files\n\t-h\tDon't follow links\n\t-a\tChange only atime\n\t-m\tChange only mtime\n" +
    "\t-d DT\tDate/time to use\n\t-t DT\tDate/time to use\n\t-r FILE\tUse FILE's date/time\n",
  mkdir:
    'Usage: mkdir [-m MODE] [-p] DIRECTORY...\n\nCreate DIRECTORY\n\n\t-m MODE\tMode\n' +
    '\t-p\tNo error if exists; make parent directories as needed\n',
  ln:
    'Usage: ln [-sfnbtv] [-S SUF] TARGET... LINK|DIR\n\nCreate a link LINK or DIR/TARGET to the specified TARGET(s)\n\n' +
    '\t-s\tMake symlinks instead of hardlinks\n\t-f\tRemove existing destinations\n' +
    "\t-n\tDon't dereference symlinks - treat like normal file\n\t-b\tMake a backup of the target (if exists) before link operation\n" +
    '\t-S SUF\tUse suffix instead of ~ when making backup files\n\t-T\tTreat LINK as a file, not DIR\n\t-v\tVerbose\n',
  chmod:
    'Usage: chmod [-Rcvf] MODE[,MODE]... FILE...\n\nMODE is octal number (bit pattern sstrwxrwxrwx) or [ugoa]{+|-|=}[rwxXst]\n\n' +
    '\t-R\tRecurse\n\t-c\tList changed files\n\t-v\tVerbose\n\t-f\tHide errors\n',
};

const errnos = {
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EEXIST: 'File exists',
  EISDIR: 'Is a directory',
  ENOTEMPTY: 'Directory not empty',
  EBUSY: 'Device or resource busy',
  EINVAL: 'Invalid argument',
  EPERM: 'Operation not permitted',
} as const;
type Errno = keyof typeof errnos;

/** A system call's failure, with the errno busybox prints. */
class SysError extends Error {
  constructor(readonly errno: Errno) {
    super(errnos[errno]);
  }
}

const usage = (program: string): ExecResult => ({ stdout: '', stderr: `${banner}${usages[program]}`, exitCode: 1 });

/** The parsed command line: options (a flag's value is `true`, an option's its argument) and operands. */
interface Parsed {
  opts: Map<string, string | true>;
  operands: string[];
}

/**
 * Reads options as busybox's getopt32 over glibc does: clustered flags, an option's value glued or
 * next, options after operands too, `--` ends them; `longs` maps long names to their letters.
 */
function getopt(program: string, args: string[], flags: string, valued: string, longs: Record<string, string> = {}): Parsed | ExecResult {
  const opts = new Map<string, string | true>();
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const [name, value] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const letter = longs[name];
      if (letter === undefined) return { stdout: '', stderr: `${program}: unrecognized option '${a}'\n${banner}${usages[program]}`, exitCode: 1 };
      if (valued.includes(letter)) {
        const v = value ?? args[++i];
        if (v === undefined)
          return { stdout: '', stderr: `${program}: option '--${name}' requires an argument\n${banner}${usages[program]}`, exitCode: 1 };
        opts.set(letter, v);
      } else opts.set(letter, true);
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      operands.push(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (valued.includes(c)) {
        const v = j + 1 < a.length ? a.slice(j + 1) : args[++i];
        if (v === undefined)
          return { stdout: '', stderr: `${program}: option requires an argument -- '${c}'\n${banner}${usages[program]}`, exitCode: 1 };
        opts.set(c, v);
        break;
      }
      if (!flags.includes(c)) return { stdout: '', stderr: `${program}: invalid option -- '${c}'\n${banner}${usages[program]}`, exitCode: 1 };
      opts.set(c, true);
    }
  }
  return { opts, operands };
}

const isResult = (p: Parsed | ExecResult): p is ExecResult => 'exitCode' in p;

type Kind = 'file' | 'directory' | 'symlink';

/** The guest's files as system calls see them: lstat, stat, and why a path cannot be reached. */
class Files {
  constructor(
    readonly fs: IFileSystem,
    private readonly cwd: string,
  ) {}

  abs(path: string): string {
    return posix.resolve(this.cwd, path);
  }

  // A Date that just-bash hands a command belongs to its context, which is revoked once the command
  // ends: a copy is what may be kept (a time set from it is read by later commands).

  /** What is at the path, not following a final symlink (undefined: nothing). */
  async lstat(path: string): Promise<{ kind: Kind; mode: number; mtime: Date } | undefined> {
    try {
      const st = await this.fs.lstat(this.abs(path));
      return {
        kind: st.isSymbolicLink ? 'symlink' : st.isDirectory ? 'directory' : 'file',
        mode: st.mode & 0o7777,
        mtime: new Date(st.mtime.getTime()),
      };
    } catch {
      return undefined;
    }
  }

  /** What the path leads to, following symlinks (undefined: nothing). */
  async stat(path: string): Promise<{ kind: Kind; mode: number; mtime: Date } | undefined> {
    try {
      const st = await this.fs.stat(this.abs(path));
      return { kind: st.isDirectory ? 'directory' : 'file', mode: st.mode & 0o7777, mtime: new Date(st.mtime.getTime()) };
    } catch {
      return undefined;
    }
  }

  async isDir(path: string): Promise<boolean> {
    return (await this.stat(path))?.kind === 'directory';
  }

  /** Why a path that is not there cannot be reached: a missing component, or one that is not a directory. */
  async missing(path: string): Promise<Errno> {
    const abs = this.abs(path);
    let at = '/';
    for (const part of abs.split('/').filter(Boolean).slice(0, -1)) {
      at = posix.join(at, part);
      const st = await this.stat(at);
      if (!st) return 'ENOENT';
      if (st.kind !== 'directory') return 'ENOTDIR';
    }
    // A trailing slash on a file: `f/`.
    if (path.endsWith('/') && (await this.stat(abs))?.kind === 'file') return 'ENOTDIR';
    return 'ENOENT';
  }

  /** Throws why a new entry cannot be made at the path (its parent is missing or not a directory). */
  async parentReady(path: string): Promise<void> {
    const parent = await this.stat(posix.dirname(this.abs(path)));
    if (!parent) throw new SysError(await this.missing(posix.dirname(this.abs(path))));
    if (parent.kind !== 'directory') throw new SysError('ENOTDIR');
  }

  /** rmdir(2). */
  async rmdir(path: string): Promise<void> {
    const abs = this.abs(path);
    const st = await this.lstat(path);
    if (!st) throw new SysError(await this.missing(path));
    if (st.kind !== 'directory') throw new SysError('ENOTDIR');
    if (abs === '/') throw new SysError('EBUSY');
    if (posix.basename(path.replace(/\/+$/, '')) === '.') throw new SysError('EINVAL');
    if ((await this.fs.readdir(abs)).length > 0) throw new SysError('ENOTEMPTY');
    await this.fs.rm(abs);
  }

  /** mkdir(2). */
  async mkdir(path: string, mode: number): Promise<void> {
    if (await this.lstat(path)) throw new SysError('EEXIST');
    await this.parentReady(path);
    await this.fs.mkdir(this.abs(path));
    await this.fs.chmod(this.abs(path), mode);
  }

  /** rename(2). */
  async rename(from: string, to: string): Promise<void> {
    const src = this.abs(from);
    const dest = this.abs(to);
    const s = await this.lstat(from);
    if (!s) throw new SysError(await this.missing(from));
    const d = await this.lstat(to);
    if (!d) await this.parentReady(to);
    if (src === dest) return;
    if (s.kind === 'directory' && (dest + '/').startsWith(src + '/')) throw new SysError('EINVAL');
    if (d) {
      if (d.kind === 'directory' && s.kind !== 'directory') throw new SysError('EISDIR');
      if (d.kind !== 'directory' && s.kind === 'directory') throw new SysError('ENOTDIR');
      if (d.kind === 'directory' && (await this.fs.readdir(dest)).length > 0) throw new SysError('ENOTEMPTY');
      await this.fs.rm(dest, { recursive: true });
    }
    await this.fs.mv(src, dest);
  }
}

const say = (program: string, what: string, e: unknown): string => `${program}: ${what}: ${e instanceof SysError ? e.message : errnos.ENOENT}\n`;

/** Answers to busybox's y/n prompts, read a line at a time from the command's stdin. */
class Answers {
  private at = 0;
  constructor(private readonly input: string) {}

  /** Whether the next line says yes (it starts with y or Y); end of input is no. */
  yes(): boolean {
    if (this.at >= this.input.length) return false;
    const end = this.input.indexOf('\n', this.at);
    const line = this.input.slice(this.at, end < 0 ? undefined : end);
    this.at = end < 0 ? this.input.length : end + 1;
    return /^\s*[yY]/.test(line);
  }
}

/** The last component of a path without its trailing slashes (`/` stays `/`). */
function lastComponent(path: string): string {
  const stripped = path.replace(/\/+$/, '');
  return stripped === '' ? (path === '' ? '' : '/') : stripped.slice(stripped.lastIndexOf('/') + 1);
}

/** busybox's concat_path_file: `dir/name` with one slash between. */
const joinPath = (dir: string, name: string): string => (dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`);

/** The mode bits a mode operand gives (octal, or `[ugoa]*[+-=][rwxXst]*,…` over `base`), or undefined when it is not one. */
export function parseMode(text: string, base: number, isDir = false): number | undefined {
  if (/^[0-7]+$/.test(text)) return Number.parseInt(text, 8) <= 0o7777 ? Number.parseInt(text, 8) : undefined;
  let mode = base;
  for (const clause of text.split(',')) {
    const m = /^([ugoa]*)((?:[-+=][rwxXst]*)+)$/.exec(clause);
    if (!m) return undefined;
    const who = m[1] || 'a';
    let mask = 0;
    for (const w of who) mask |= { u: 0o4700, g: 0o2070, o: 0o1007, a: 0o7777 }[w as 'u' | 'g' | 'o' | 'a'];
    for (const op of m[2]!.match(/[-+=][rwxXst]*/g) ?? []) {
      let bits = 0;
      for (const p of op.slice(1)) {
        if (p === 'r') bits |= 0o444;
        else if (p === 'w') bits |= 0o222;
        else if (p === 'x' || (p === 'X' && (isDir || (mode & 0o111) !== 0))) bits |= 0o111;
        else if (p === 's') bits |= 0o6000;
        else if (p === 't') bits |= 0o1000;
      }
      bits &= mask;
      if (op[0] === '+') mode |= bits;
      else if (op[0] === '-') mode &= ~bits;
      else mode = (mode & ~(mask & 0o7777)) | bits;
    }
  }
  return mode;
}

/** The default umask of a guest's processes. */
const umask = 0o022;

/**
 * busybox 1.35's `touch -d`/`-t` dates: `@SECONDS`, `YYYY-MM-DD [hh:mm[:ss]]`, `hh:mm[:ss]` (fields
 * not given keep the current time's), `[[CC]YY]MMDDhhmm[.ss]`; the guest's clock is UTC.
 */
function parseDate(text: string, now: Date): Date | undefined {
  let m = /^@(-?\d+)$/.exec(text);
  if (m) return new Date(Number(m[1]) * 1000);
  const parts = [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()];
  const at = (p: number[]): Date | undefined => {
    const d = new Date(Date.UTC(p[0]!, p[1]! - 1, p[2]!, p[3]!, p[4]!, p[5]!));
    return d.getUTCMonth() === p[1]! - 1 && p[3]! < 24 && p[4]! < 60 && p[5]! < 61 ? d : undefined;
  };
  m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2})(?::(\d{1,2}))?)?$/.exec(text);
  if (m) {
    const [y, mo, d, h, mi, s] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v)));
    return at([y!, mo!, d!, h ?? parts[3]!, mi ?? parts[4]!, s ?? parts[5]!]);
  }
  m = /^(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?$/.exec(text);
  if (m) return at([parts[0]!, parts[1]!, parts[2]!, Number(m[1]), Number(m[2]), m[3] === undefined ? parts[5]! : Number(m[3])]);
  m = /^(\d{8}|\d{10}|\d{12})(?:\.(\d{2}))?$/.exec(text);
  if (m) {
    const digits = m[1]!;
    const tail = digits.slice(-8);
    const head = digits.slice(0, -8);
    const year = head.length === 4 ? Number(head) : head.length === 2 ? (Number(head) < 69 ? 2000 : 1900) + Number(head) : parts[0]!;
    return at([year, Number(tail.slice(0, 2)), Number(tail.slice(2, 4)), Number(tail.slice(4, 6)), Number(tail.slice(6, 8)), Number(m[2] ?? 0)]);
  }
  return undefined;
}

interface Outcome {
  stdout: string;
  stderr: string;
  failed: boolean;
}

const outcome = (): Outcome => ({ stdout: '', stderr: '', failed: false });
const done = (o: Outcome): ExecResult => ({ stdout: o.stdout, stderr: o.stderr, exitCode: o.failed ? 1 : 0 });

async function rm(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('rm', args, 'fiRrv', '');
  if (isResult(p)) return p;
  const force = p.opts.has('f');
  const recurse = p.opts.has('r') || p.opts.has('R');
  // -f and -i cancel each other: the last given wins.
  const interactive = p.opts.has('i') && !(force && args.lastIndexOf('-f') > args.lastIndexOf('-i'));
  if (p.operands.length === 0) return force ? done(outcome()) : usage('rm');
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  const remove = async (path: string): Promise<boolean> => {
    const st = await files.lstat(path);
    if (!st) {
      const why = await files.missing(path);
      if (why === 'ENOENT' && force) return true;
      o.stderr += `rm: ${why === 'ENOENT' ? "can't remove" : "can't stat"} '${path}': ${errnos[why]}\n`;
      return false;
    }
    if (st.kind === 'directory') {
      if (!recurse) {
        o.stderr += `rm: '${path}' is a directory\n`;
        return false;
      }
      if (interactive) {
        o.stderr += `rm: descend into directory '${path}'? `;
        if (!answers.yes()) return true;
      }
      let ok = true;
      for (const name of await ctx.fs.readdir(files.abs(path))) if (!(await remove(joinPath(path, name)))) ok = false;
      if (!ok) return false;
      if (interactive) {
        o.stderr += `rm: remove directory '${path}'? `;
        if (!answers.yes()) return true;
      }
      try {
        await files.rmdir(path);
      } catch (e) {
        o.stderr += say('rm', `can't remove '${path}'`, e);
        return false;
      }
      if (p.opts.has('v')) o.stdout += `removed directory: '${path}'\n`;
      return true;
    }
    if (interactive) {
      o.stderr += `rm: remove '${path}'? `;
      if (!answers.yes()) return true;
    }
    await ctx.fs.rm(files.abs(path));
    if (p.opts.has('v')) o.stdout += `removed '${path}'\n`;
    return true;
  };
  for (const operand of p.operands) {
    // busybox strips the operand's trailing slashes before all else: `rm link/` removes the link.
    const path = operand.length > 1 ? operand.replace(/\/+$/, '') || '/' : operand;
    const base = lastComponent(path);
    if (base === '.' || base === '..') {
      o.stderr += "rm: can't remove '.' or '..'\n";
      o.failed = true;
      continue;
    }
    if (!(await remove(path))) o.failed = true;
  }
  return done(o);
}

async function rmdir(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('rmdir', args, 'pv', '', { parents: 'p', 'ignore-fail-on-non-empty': 'I', verbose: 'v' });
  if (isResult(p)) return p;
  if (p.operands.length === 0) return usage('rmdir');
  const files = new Files(ctx.fs, ctx.cwd);
  const o = outcome();
  for (let path of p.operands) {
    for (;;) {
      if (p.opts.has('v')) o.stdout += `rmdir: removing directory, '${path}'\n`;
      try {
        await files.rmdir(path);
      } catch (e) {
        if (!(p.opts.has('I') && e instanceof SysError && e.errno === 'ENOTEMPTY')) {
          o.stderr += say('rmdir', `'${path}'`, e);
          o.failed = true;
        }
        break;
      }
      if (!p.opts.has('p')) break;
      path = posix.dirname(path.replace(/\/+$/, ''));
      if (path === '.') break;
    }
  }
  return done(o);
}

async function mkdir(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('mkdir', args, 'pv', 'm', { mode: 'm', parents: 'p', verbose: 'v' });
  if (isResult(p)) return p;
  const given = p.opts.get('m');
  const mode = typeof given === 'string' ? parseMode(given, 0o777, true) : 0o777 & ~umask;
  if (mode === undefined) return { stdout: '', stderr: `mkdir: invalid mode '${String(given)}'\n`, exitCode: 1 };
  if (p.operands.length === 0) return usage('mkdir');
  const parents = p.opts.has('p');
  const files = new Files(ctx.fs, ctx.cwd);
  const o = outcome();
  for (const path of p.operands) {
    // busybox makes each leading directory in turn, naming it with its slash (`d/f/`) when that fails.
    const steps: string[] = [];
    if (parents) for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) if (path[i - 1] !== '/') steps.push(path.slice(0, i + 1));
    steps.push(path);
    for (const step of steps) {
      const last = step === path;
      try {
        const st = await files.stat(step);
        if (st && parents) {
          if (st.kind === 'directory') continue;
          throw new SysError(last && !step.endsWith('/') ? 'EEXIST' : 'ENOTDIR');
        }
        await files.mkdir(step, last ? mode : 0o777 & ~umask);
        if (p.opts.has('v')) o.stdout += `created directory: '${step}'\n`;
      } catch (e) {
        o.stderr += say('mkdir', `can't create directory '${step}'`, e);
        o.failed = true;
        break;
      }
    }
  }
  return done(o);
}

async function touch(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('touch', args, 'chma', 'dtr');
  if (isResult(p)) return p;
  if (p.operands.length === 0) return usage('touch');
  const files = new Files(ctx.fs, ctx.cwd);
  let time: Date | undefined;
  const reference = p.opts.get('r');
  if (typeof reference === 'string') {
    const st = await files.stat(reference);
    if (!st) return { stdout: '', stderr: say('touch', `can't stat '${reference}'`, new SysError(await files.missing(reference))), exitCode: 1 };
    time = st.mtime;
  }
  const date = p.opts.get('t') ?? p.opts.get('d');
  if (typeof date === 'string') {
    time = parseDate(date, new Date());
    if (!time) return { stdout: '', stderr: `touch: invalid date '${date}'\n`, exitCode: 1 };
  }
  const o = outcome();
  for (const path of p.operands) {
    const abs = files.abs(path);
    const st = p.opts.has('h') ? await files.lstat(path) : await files.stat(path);
    try {
      if (!st) {
        const why = await files.missing(path);
        if (why !== 'ENOENT') throw new SysError(why);
        if (p.opts.has('c')) continue;
        await files.parentReady(path);
        await ctx.fs.writeFile(abs, '');
        await ctx.fs.chmod(abs, 0o666 & ~umask);
        if (!time) continue;
      }
      const when = time ?? new Date();
      await ctx.fs.utimes(abs, when, when);
    } catch (e) {
      o.stderr += say('touch', path, e);
      o.failed = true;
    }
  }
  return done(o);
}

async function ln(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('ln', args, 'sfnbvT', 'S');
  if (isResult(p)) return p;
  const targets = [...p.operands];
  if (targets.length === 0) return usage('ln');
  if (p.opts.has('T') && targets.length > 2) return { stdout: '', stderr: 'ln: -T accepts 2 args max\n', exitCode: 1 };
  const files = new Files(ctx.fs, ctx.cwd);
  // `ln TARGET`: the link is made here, named as the target.
  const last = targets.length === 1 ? lastComponent(targets[0]!) || '.' : targets.pop()!;
  const noDeref = p.opts.has('n');
  const o = outcome();
  if (p.opts.has('T') && (noDeref ? (await files.lstat(last))?.kind === 'directory' : await files.isDir(last)))
    return { stdout: '', stderr: `ln: '${last}' is a directory\n`, exitCode: 1 };
  const suffix = typeof p.opts.get('S') === 'string' ? (p.opts.get('S') as string) : '~';
  for (const target of targets) {
    let link = last;
    const intoDir = noDeref ? (await files.lstat(last))?.kind === 'directory' : await files.isDir(last);
    if (!p.opts.has('T') && intoDir) link = joinPath(last, lastComponent(target));
    try {
      if (!p.opts.has('s') && !(await files.stat(target)) && (await files.lstat(target))?.kind !== 'symlink') {
        o.stderr += say('ln', target, new SysError(await files.missing(target)));
        o.failed = true;
        continue;
      }
      if (p.opts.has('b') && (await files.lstat(link))) await files.rename(link, `${link}${suffix}`);
      if (p.opts.has('f') && (await files.lstat(link))?.kind !== 'directory' && (await files.lstat(link))) await ctx.fs.rm(files.abs(link));
      if (await files.lstat(link)) throw new SysError('EEXIST');
      await files.parentReady(link);
      if (p.opts.has('s')) await ctx.fs.symlink(target, files.abs(link));
      else {
        if ((await files.stat(target))?.kind === 'directory') throw new SysError('EPERM');
        await ctx.fs.link(files.abs(target), files.abs(link));
      }
      if (p.opts.has('v')) o.stdout += `'${link}' -> '${target}'\n`;
    } catch (e) {
      o.stderr += say('ln', link, e);
      o.failed = true;
    }
  }
  return done(o);
}

/** cp_mv_stat: 0 nothing there, 1 a file, 3 a directory; a path that cannot be reached is an error. */
async function cpMvStat(program: string, files: Files, path: string, follow: boolean, o: Outcome): Promise<0 | 1 | 3 | -1> {
  const st = follow ? await files.stat(path) : await files.lstat(path);
  if (st) return st.kind === 'directory' ? 3 : 1;
  const why = await files.missing(path);
  if (why === 'ENOENT') return 0;
  o.stderr += `${program}: can't stat '${path}': Path has non-directory component\n`;
  return -1;
}

async function mv(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('mv', args, 'finTv', 't', {
    interactive: 'i',
    force: 'f',
    'no-clobber': 'n',
    'no-target-directory': 'T',
    'target-directory': 't',
    verbose: 'v',
  });
  if (isResult(p)) return p;
  const dir = p.opts.get('t');
  const operands = [...p.operands];
  if (operands.length + (typeof dir === 'string' ? 1 : 0) < 2) return usage('mv');
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  // -f, -i and -n cancel each other: the last given wins.
  const lastOf = (c: string) => Math.max(...args.map((a, i) => (/^-[a-zA-Z]+$/.test(a) && a.includes(c) ? i : -1)));
  const winner = ['f', 'i', 'n'].filter((c) => p.opts.has(c)).sort((a, b) => lastOf(b) - lastOf(a))[0];
  const last = typeof dir === 'string' ? dir : operands.pop()!;
  const move = async (source: string, dest: string, destKind: 0 | 1 | 3): Promise<void> => {
    if (destKind) {
      if (winner === 'n') return;
      if (winner === 'i') {
        o.stderr += `mv: overwrite '${dest}'? `;
        if (!answers.yes()) return;
      }
    }
    try {
      await files.rename(source, dest);
      if (p.opts.has('v')) o.stdout += `'${source}' -> '${dest}'\n`;
    } catch (e) {
      o.stderr += say('mv', `can't rename '${source}'`, e);
      o.failed = true;
    }
  };
  if (operands.length === 1 && typeof dir !== 'string') {
    const d = await cpMvStat('mv', files, last, true, o);
    if (d === -1) return done({ ...o, failed: true });
    // -T renames onto DEST as it is (an empty directory is replaced).
    if (d !== 3 || p.opts.has('T')) return (await move(operands[0]!, last, d), done(o));
  }
  for (const source of operands) {
    const dest = joinPath(last, lastComponent(source));
    const d = await cpMvStat('mv', files, dest, true, o);
    if (d === -1) {
      o.failed = true;
      continue;
    }
    await move(source, dest, d);
  }
  return done(o);
}

interface CopyOptions {
  recurse: boolean;
  /** Copies symlinks as symlinks (-d, -P, -a, and -R without -L). */
  keepLinks: boolean;
  preserve: boolean;
  noClobber: boolean;
  interactive: boolean;
  force: boolean;
  links: 'hard' | 'soft' | undefined;
  update: boolean;
}

async function cp(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('cp', args, 'arRPdLHpfinlsTuv', 't', {
    archive: 'a',
    recursive: 'R',
    'no-dereference': 'P',
    dereference: 'L',
    preserve: 'p',
    force: 'f',
    interactive: 'i',
    'no-clobber': 'n',
    link: 'l',
    'symbolic-link': 's',
    'no-target-directory': 'T',
    'target-directory': 't',
    update: 'u',
    verbose: 'v',
  });
  if (isResult(p)) return p;
  const has = (c: string) => p.opts.has(c);
  const recurse = has('a') || has('r') || has('R');
  const opt: CopyOptions = {
    recurse,
    keepLinks: has('a') || has('d') || has('P') || (recurse && !has('L')),
    preserve: has('a') || has('p'),
    noClobber: has('n'),
    interactive: has('i'),
    force: has('f'),
    links: has('l') ? 'hard' : has('s') ? 'soft' : undefined,
    update: has('u'),
  };
  const dir = p.opts.get('t');
  const operands = [...p.operands];
  if (operands.length + (typeof dir === 'string' ? 1 : 0) < 2) return usage('cp');
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  const last = typeof dir === 'string' ? dir : operands.pop()!;
  const made = new Set<string>();
  const copy = async (source: string, dest: string, top: boolean): Promise<boolean> => {
    const follow = !opt.keepLinks || (top && has('H'));
    const s = follow ? await files.stat(source) : await files.lstat(source);
    if (!s) {
      o.stderr += say('cp', `can't stat '${source}'`, new SysError(await files.missing(source)));
      return false;
    }
    const d = await files.lstat(dest);
    if (!d) {
      const why = await files.missing(dest);
      if (why !== 'ENOENT') {
        o.stderr += say('cp', `can't stat '${dest}'`, new SysError(why));
        return false;
      }
    }
    const srcAbs = files.abs(source);
    const destAbs = files.abs(dest);
    if (d && (await ctx.fs.realpath(srcAbs).catch(() => srcAbs)) === (await ctx.fs.realpath(destAbs).catch(() => destAbs))) {
      o.stderr += `cp: '${source}' and '${dest}' are the same file\n`;
      return false;
    }
    if (s.kind === 'directory') {
      if (!opt.recurse) {
        o.stderr += `cp: omitting directory '${source}'\n`;
        return false;
      }
      // busybox remembers the directories it made: meeting one as a source is copying a tree into itself.
      if (made.has(srcAbs)) {
        o.stderr += `cp: recursion detected, omitting directory '${source}'\n`;
        return false;
      }
      if (d && d.kind !== 'directory' && (await files.stat(dest))?.kind !== 'directory') {
        o.stderr += `cp: target '${dest}' is not a directory\n`;
        return false;
      }
      if (!d) {
        try {
          await files.mkdir(dest, (s.mode | 0o700) & ~umask);
          made.add(destAbs);
        } catch (e) {
          o.stderr += say('cp', `can't create directory '${dest}'`, e);
          return false;
        }
      }
      let ok = true;
      for (const name of await ctx.fs.readdir(srcAbs)) if (!(await copy(joinPath(source, name), joinPath(dest, name), false))) ok = false;
      // A directory is said once its entries are copied.
      if (p.opts.has('v')) o.stdout += `'${source}' -> '${dest}'\n`;
      if (opt.preserve || !d) await ctx.fs.chmod(destAbs, opt.preserve ? s.mode : s.mode & ~umask);
      if (opt.preserve) await ctx.fs.utimes(destAbs, s.mtime, s.mtime);
      return ok;
    }
    if (d) {
      if (opt.noClobber) return true;
      if (opt.update && d.mtime >= s.mtime) return true;
      if (opt.interactive) {
        o.stderr += `cp: overwrite '${dest}'? `;
        if (!answers.yes()) return true;
      }
      if (d.kind === 'directory') {
        o.stderr += `cp: can't create '${dest}': Is a directory\n`;
        return false;
      }
    }
    if (p.opts.has('v')) o.stdout += `'${source}' -> '${dest}'\n`;
    try {
      if (!d) await files.parentReady(dest);
      if (opt.links || s.kind === 'symlink') {
        if (d) await ctx.fs.rm(destAbs);
        if (s.kind === 'symlink') await ctx.fs.symlink(await ctx.fs.readlink(srcAbs), destAbs);
        else if (opt.links === 'soft') await ctx.fs.symlink(source, destAbs);
        else await ctx.fs.link(srcAbs, destAbs);
        return true;
      }
      if (d?.kind === 'symlink') await ctx.fs.rm(destAbs);
      await ctx.fs.writeFile(destAbs, await ctx.fs.readFileBuffer(srcAbs));
      if (!d || d.kind === 'symlink') await ctx.fs.chmod(destAbs, opt.preserve ? s.mode : s.mode & ~umask);
      else if (opt.preserve) await ctx.fs.chmod(destAbs, s.mode);
      if (opt.preserve) await ctx.fs.utimes(destAbs, s.mtime, s.mtime);
    } catch (e) {
      o.stderr += say('cp', `can't create '${dest}'`, e);
      return false;
    }
    return true;
  };
  if (operands.length === 1 && typeof dir !== 'string') {
    const s = await cpMvStat('cp', files, operands[0]!, !opt.keepLinks || has('H'), o);
    if (s === -1) return done({ ...o, failed: true });
    const d = await cpMvStat('cp', files, last, true, o);
    if (d === -1) return done({ ...o, failed: true });
    if (has('T') || !((s | d) & 2) || (opt.recurse && s === 3 && d === 0)) {
      o.failed = !(await copy(operands[0]!, last, true));
      return done(o);
    }
  }
  for (const source of operands) if (!(await copy(source, joinPath(last, lastComponent(source)), true))) o.failed = true;
  return done(o);
}

async function chmod(args: string[], ctx: CommandContext): Promise<ExecResult> {
  // A mode like -w or -x is an operand, not an option.
  const modeAt = args.findIndex((a) => !/^-[Rcvf]+$/.test(a));
  const flags = args.slice(0, Math.max(modeAt, 0)).join('');
  const [mode, ...paths] = modeAt < 0 ? [] : args.slice(modeAt);
  if (mode === undefined || paths.length === 0) return usage('chmod');
  const files = new Files(ctx.fs, ctx.cwd);
  if (parseMode(mode, 0) === undefined) return { stdout: '', stderr: `chmod: invalid mode '${mode}'\n`, exitCode: 1 };
  const o = outcome();
  const apply = async (path: string, top: boolean): Promise<void> => {
    const st = top ? await files.stat(path) : await files.lstat(path);
    if (!st) {
      // -f hides chmod's own errors only: busybox still says a file is missing.
      o.stderr += say('chmod', path, new SysError(await files.missing(path)));
      o.failed = true;
      return;
    }
    if (st.kind === 'symlink') return;
    const next = parseMode(mode, st.mode, st.kind === 'directory')!;
    await ctx.fs.chmod(files.abs(path), next);
    if (flags.includes('v') || (flags.includes('c') && next !== st.mode))
      o.stdout += `mode of '${path}' changed to ${next.toString(8).padStart(4, '0')} (${modeText(next)})\n`;
    if (flags.includes('R') && st.kind === 'directory')
      for (const name of await ctx.fs.readdir(files.abs(path))) await apply(joinPath(path, name), false);
  };
  for (const path of paths) await apply(path, true);
  return done(o);
}

/** The permission bits as `ls -l` shows them, without the type letter (as busybox's chmod -v says them). */
function modeText(mode: number): string {
  const rwx = (bits: number, special: boolean, letter: string) =>
    `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${special ? (bits & 1 ? letter : letter.toUpperCase()) : bits & 1 ? 'x' : '-'}`;
  return rwx(mode >> 6, (mode & 0o4000) !== 0, 's') + rwx(mode >> 3, (mode & 0o2000) !== 0, 's') + rwx(mode, (mode & 0o1000) !== 0, 't');
}

const programs: Record<string, (args: string[], ctx: CommandContext) => Promise<ExecResult>> = { rm, rmdir, mkdir, touch, ln, mv, cp, chmod };

/**
 * busybox 1.35's `rm`, `rmdir`, `mkdir`, `touch`, `ln`, `mv`, `cp` and `chmod` over the guest's
 * files, where just-bash's are GNU's in wording and some behaviour (`ln -s a DIR` made no DIR/a,
 * `touch /nosuch/x` made /nosuch, `rm -r ..` removed the parent): busybox's options, usages,
 * messages and exit codes, as the test beds' busybox answers them.
 */
export function busyboxCoreutils(): Command[] {
  return Object.entries(programs).map(([name, run]) => ({ name, execute: (args, ctx) => run(args, ctx) }));
}
