import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { cp, mv } from './busybox-copy.js';
import { Answers, Files, SysError, done, joinPath, lastComponent, outcome, say, type Outcome } from './busybox-file-calls.js';
import { apart, banner, getopt, helpAsked, isResult, usage } from './busybox-getopt.js';
import { resolvePath } from './file-status.js';
import { defaultUmask, newEntryMode } from './guest-fs.js';
import { errnos } from './fs-error.js';
import { fromLocal, guestZone, localTime, offsetText, zoneOf, type Zone } from './guest-zone.js';

/** Each program's usage, as busybox prints it (to stderr, exit 1) for a wrong call. */
const usages = {
  rm: 'Usage: rm [-irf] FILE...\n\nRemove (unlink) FILEs\n\n\t-i\tAlways prompt before removing\n\t-f\tNever prompt\n\t-R,-r\tRecurse\n',
  rmdir: 'Usage: rmdir [-p] DIRECTORY...\n\nRemove DIRECTORY if it is empty\n\n\t-p\tInclude parents\n\t--ignore-fail-on-non-empty\n',
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
  readlink:
    "Usage: readlink [-fnv] FILE\n\nDisplay the value of a symlink\n\n\t-f\tCanonicalize by following all symlinks\n\t-n\tDon't add newline\n\t-v\tVerbose\n",
  chmod:
    'Usage: chmod [-Rcvf] MODE[,MODE]... FILE...\n\nMODE is octal number (bit pattern sstrwxrwxrwx) or [ugoa]{+|-|=}[rwxXst]\n\n' +
    '\t-R\tRecurse\n\t-c\tList changed files\n\t-v\tVerbose\n\t-f\tHide errors\n',
};

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

/**
 * busybox 1.35's dates for `touch -d`/`-t` and `date -d` (libbb's parse_datestr): `@SECONDS`,
 * `YYYY-MM-DD [hh[:mm[:ss]]]`, `hh:mm[:ss]`, `MM.DD-hh:mm[:ss]`, `YYYY.MM.DD-hh:mm[:ss]`, `Mon DD
 * hh:mm:ss YYYY` (fields not given keep `now`'s: `date` gives it at midnight, `touch` as it is),
 * `[[[[[CC]YY]MM]DD]hh]mm[.ss]`; nothing else (`now`, `01/02/2024`, an ISO `T`). The fields are
 * local time in `zone` (mktime), `now` is given in it ({@link localTime}'s fields).
 */
function parseDate(text: string, now: Date, zone: Zone): Date | undefined {
  // A negative count is refused, as on the beds (`date -d @-1`: invalid date).
  const m = /^@(\d+)$/.exec(text);
  if (m) return new Date(Number(m[1]) * 1000);
  const local = localFields(text, now);
  return local && fromLocal(zone, local);
}

/** parse_datestr's fields of `text` (the forms {@link parseDate} names but `@`), as UTC's. */
function localFields(text: string, now: Date): Date | undefined {
  let m: RegExpExecArray | null;
  const parts = [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()];
  const at = (p: number[]): Date | undefined => {
    const d = new Date(Date.UTC(p[0]!, p[1]! - 1, p[2]!, p[3]!, p[4]!, p[5]!));
    return d.getUTCMonth() === p[1]! - 1 && p[3]! < 24 && p[4]! < 60 && p[5]! < 61 ? d : undefined;
  };
  m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?: (\d{1,2})(?::(\d{1,2})(?::(\d{1,2}))?)?)?$/.exec(text);
  if (m) {
    const [y, mo, d, h, mi, s] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v)));
    return at([y!, mo!, d!, h ?? parts[3]!, mi ?? parts[4]!, s ?? parts[5]!]);
  }
  m = /^(?:(\d{4})\.)?(\d{1,2})\.(\d{1,2})-(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?$/.exec(text);
  if (m)
    return at([
      m[1] ? Number(m[1]) : parts[0]!,
      Number(m[2]),
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      m[6] === undefined ? parts[5]! : Number(m[6]),
    ]);
  m = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2}) (\d{4})$/.exec(text);
  const month = m ? ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].indexOf(m[1]!) : -1;
  if (m && month >= 0) return at([Number(m[6]), month + 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])]);
  m = /^(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?$/.exec(text);
  if (m) return at([parts[0]!, parts[1]!, parts[2]!, Number(m[1]), Number(m[2]), m[3] === undefined ? parts[5]! : Number(m[3])]);
  m = /^(\d{2}|\d{4}|\d{6})(?:\.(\d{2}))?$/.exec(text);
  if (m) {
    // mm, hhmm or DDhhmm of the current month, seconds 0 but for .ss.
    const d = m[1]!.padStart(6, '_');
    const field = (at2: number, current: number): number => (d[at2] === '_' ? current : Number(d.slice(at2, at2 + 2)));
    return at([parts[0]!, parts[1]!, field(0, parts[2]!), field(2, parts[3]!), Number(d.slice(4)), Number(m[2] ?? 0)]);
  }
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

async function rm(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('rm', usages.rm, args, 'fiRrv', '');
  if (isResult(p)) return p;
  const force = p.opts.has('f');
  const recurse = p.opts.has('r') || p.opts.has('R');
  // -f and -i cancel each other: the last given wins.
  const interactive = p.opts.has('i') && !(force && args.lastIndexOf('-f') > args.lastIndexOf('-i'));
  if (p.operands.length === 0) return force ? done(outcome()) : usage(usages.rm);
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  const remove = async (path: string): Promise<boolean> => {
    const st = await files.lstat(path);
    if (!st) {
      const why = await files.missing(path);
      if (why === 'ENOENT' && force) return true;
      o.err(`rm: ${why === 'ENOENT' ? "can't remove" : "can't stat"} '${path}': ${errnos[why]}\n`);
      return false;
    }
    if (st.kind === 'directory') {
      if (!recurse) {
        o.err(`rm: '${path}' is a directory\n`);
        return false;
      }
      if (interactive) {
        o.err(`rm: descend into directory '${path}'? `);
        if (!answers.yes()) return true;
      }
      let ok = true;
      for (const name of await ctx.fs.readdir(files.abs(path))) if (!(await remove(joinPath(path, name)))) ok = false;
      if (!ok) return false;
      if (interactive) {
        o.err(`rm: remove directory '${path}'? `);
        if (!answers.yes()) return true;
      }
      try {
        await files.rmdir(path);
      } catch (e) {
        o.err(say('rm', `can't remove '${path}'`, e));
        return false;
      }
      if (p.opts.has('v')) o.out(`removed directory: '${path}'\n`);
      return true;
    }
    if (interactive) {
      o.err(`rm: remove '${path}'? `);
      if (!answers.yes()) return true;
    }
    try {
      await ctx.fs.rm(files.abs(path));
    } catch (e) {
      o.err(say('rm', `can't remove '${path}'`, e));
      return false;
    }
    if (p.opts.has('v')) o.out(`removed '${path}'\n`);
    return true;
  };
  for (const operand of p.operands) {
    // busybox strips the operand's trailing slashes before all else: `rm link/` removes the link.
    const path = operand.length > 1 ? operand.replace(/\/+$/, '') || '/' : operand;
    const base = lastComponent(path);
    if (base === '.' || base === '..') {
      o.err("rm: can't remove '.' or '..'\n");
      o.failed = true;
      continue;
    }
    if (!(await remove(path))) o.failed = true;
  }
  return done(o);
}

async function rmdir(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('rmdir', usages.rmdir, args, 'pv', '', { parents: 'p', 'ignore-fail-on-non-empty': 'I', verbose: 'v' });
  if (isResult(p)) return p;
  if (p.operands.length === 0) return usage(usages.rmdir);
  const files = new Files(ctx.fs, ctx.cwd);
  const o = outcome();
  for (let path of p.operands) {
    for (;;) {
      if (p.opts.has('v')) o.out(`rmdir: removing directory, '${path}'\n`);
      try {
        await files.rmdir(path);
      } catch (e) {
        if (!(p.opts.has('I') && e instanceof SysError && e.errno === 'ENOTEMPTY')) {
          o.err(say('rmdir', `'${path}'`, e));
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

async function mkdir(args: string[], ctx: CommandContext, umask: number): Promise<ExecResult> {
  const p = getopt('mkdir', usages.mkdir, args, 'pv', 'm', { mode: 'm', parents: 'p', verbose: 'v' });
  if (isResult(p)) return p;
  const given = p.opts.get('m');
  // -m is set with chmod after mkdir(2): the umask does not take from it.
  const mode = typeof given === 'string' ? parseMode(given, 0o777, true) : newEntryMode(0o777, umask);
  if (mode === undefined) return { stdout: '', stderr: `mkdir: invalid mode '${String(given)}'\n`, exitCode: 1 };
  if (p.operands.length === 0) return usage(usages.mkdir);
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
        // busybox makes -p's leading directories writable and searchable by their user whatever the umask.
        await files.mkdir(step, last ? mode : newEntryMode(0o777, umask & ~0o300));
        if (p.opts.has('v')) o.out(`created directory: '${step}'\n`);
      } catch (e) {
        o.err(say('mkdir', `can't create directory '${step}'`, e));
        o.failed = true;
        break;
      }
    }
  }
  return done(o);
}

async function touch(args: string[], ctx: CommandContext, umask: number): Promise<ExecResult> {
  const p = getopt('touch', usages.touch, args, 'chma', 'dtr');
  if (isResult(p)) return p;
  const zone = zoneOf(ctx);
  if (p.operands.length === 0) return usage(usages.touch);
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
    time = parseDate(date, localTime(zone, Date.now()).local, zone);
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
        // open(O_CREAT) of a name with a trailing slash.
        if (path.endsWith('/')) throw new SysError('EISDIR');
        await ctx.fs.writeFile(abs, '');
        await ctx.fs.chmod(abs, newEntryMode(0o666, umask));
        if (!time) continue;
      }
      const when = time ?? new Date();
      // -a or -m alone leaves the other time as it is (utimensat's UTIME_OMIT: an invalid Date to the guest's utimes).
      const omit = new Date(Number.NaN);
      const [a, m] = [p.opts.has('a'), p.opts.has('m')];
      await ctx.fs.utimes(abs, m && !a ? omit : when, a && !m ? omit : when);
    } catch (e) {
      o.err(say('touch', path, e));
      o.failed = true;
    }
  }
  return done(o);
}

async function ln(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('ln', usages.ln, args, 'sfnbvT', 'S');
  if (isResult(p)) return p;
  const targets = [...p.operands];
  if (targets.length === 0) return usage(usages.ln);
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
        o.err(say('ln', target, new SysError(await files.missing(target))));
        o.failed = true;
        continue;
      }
      if (p.opts.has('b') && (await files.lstat(link))) await files.rename(link, `${link}${suffix}`);
      if (p.opts.has('f') && (await files.lstat(link))?.kind !== 'directory' && (await files.lstat(link))) await ctx.fs.rm(files.abs(link));
      // busybox says -v's line before it tries the link (ln.c), so a link that fails is said too.
      if (p.opts.has('v')) o.out(`'${link}' -> '${target}'\n`);
      if (await files.lstat(link)) throw new SysError('EEXIST');
      await files.parentReady(link);
      if (p.opts.has('s')) await ctx.fs.symlink(target, files.abs(link));
      else {
        if ((await files.stat(target))?.kind === 'directory') throw new SysError('EPERM');
        await ctx.fs.link(files.abs(target), files.abs(link));
      }
    } catch (e) {
      o.err(say('ln', link, e));
      o.failed = true;
    }
  }
  return done(o);
}

/**
 * busybox's `readlink [-fnv] FILE`: exactly one operand (getopt32's `=1`, its usage otherwise); -f
 * canonicalizes as xmalloc_realpath_coreutils does (a missing last component is kept, and a dangling
 * symlink's relative target is taken from the current directory, as busybox takes it); its errors
 * are silent but with -v, and -s/-q are taken and ignored.
 */
async function readlink(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const help = helpAsked(args, usages.readlink);
  if (help) return help;
  const p = getopt('readlink', usages.readlink, args, 'fnvsq', '', null);
  if (isResult(p)) return p;
  if (p.operands.length !== 1) return usage(usages.readlink);
  const name = p.operands[0]!;
  const o = outcome();
  const found = p.opts.has('f') ? await canonical(ctx, name) : await linkText(ctx, name, p.opts.has('v') ? o : undefined);
  if (found === undefined) return done(o, true);
  o.out(p.opts.has('n') ? found : `${found}\n`);
  return done(o);
}

/** xmalloc_readlink_or_warn: a symlink's target, or undefined with busybox's warning when one is wanted. */
async function linkText(ctx: CommandContext, name: string, warn?: Outcome): Promise<string | undefined> {
  const files = new Files(ctx.fs, ctx.cwd);
  const st = await files.lstat(name);
  if (st?.kind === 'symlink' && !name.endsWith('/')) return ctx.fs.readlink(files.abs(name));
  if (warn) warn.err(`readlink: ${name}: cannot read link: ${st ? 'not a symlink' : errnos[await files.missing(name)]}\n`);
  return undefined;
}

/** xmalloc_realpath_coreutils: realpath(3), or for a path that is missing, its parent's realpath and its last name. */
async function canonical(ctx: CommandContext, name: string): Promise<string | undefined> {
  if (name === '') return undefined;
  // Not normalized: `..` is taken after the symlinks before it, and a trailing slash asks for a directory.
  const real = await resolvePath(ctx.fs, name.startsWith('/') ? name : `${ctx.cwd}/${name}`, true);
  if ('path' in real) return real.path;
  if (real.errno !== 'ENOENT') return undefined;
  const target = await linkText(ctx, name);
  if (target !== undefined) return canonical(ctx, target.startsWith('/') ? target : joinPath(ctx.cwd, target));
  const stripped = name.replace(/^\/+(?=\/)/, '').replace(/(?<=.)\/+$/, '');
  const slash = stripped.lastIndexOf('/');
  if (slash === 0) return stripped;
  if (slash < 0) return undefined;
  const parent = await resolvePath(ctx.fs, posix.resolve(ctx.cwd, stripped.slice(0, slash)), true);
  return 'path' in parent ? joinPath(parent.path, stripped.slice(slash + 1)) : undefined;
}

async function chmod(args: string[], ctx: CommandContext): Promise<ExecResult> {
  // A mode like -w or -x is an operand, not an option.
  const modeAt = args.findIndex((a) => !/^-[Rcvf]+$/.test(a));
  const flags = args.slice(0, Math.max(modeAt, 0)).join('');
  const [mode, ...paths] = modeAt < 0 ? [] : args.slice(modeAt);
  if (mode === undefined || paths.length === 0) return usage(usages.chmod);
  const files = new Files(ctx.fs, ctx.cwd);
  if (parseMode(mode, 0) === undefined) return { stdout: '', stderr: `chmod: invalid mode '${mode}'\n`, exitCode: 1 };
  const o = outcome();
  const apply = async (path: string, top: boolean): Promise<void> => {
    const st = top ? await files.stat(path) : await files.lstat(path);
    if (!st) {
      // -f hides chmod's own errors only: busybox still says a file is missing.
      o.err(say('chmod', path, new SysError(await files.missing(path))));
      o.failed = true;
      return;
    }
    if (st.kind === 'symlink') return;
    const next = parseMode(mode, st.mode, st.kind === 'directory')!;
    try {
      await ctx.fs.chmod(files.abs(path), next);
    } catch (e) {
      o.err(say('chmod', path, e));
      o.failed = true;
      return;
    }
    if (flags.includes('v') || (flags.includes('c') && next !== st.mode))
      o.out(`mode of '${path}' changed to ${next.toString(8).padStart(4, '0')} (${modeText(next)})\n`);
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

/** A strftime directive with glibc's flags (`-_0^#`) or a width. */
const strftimeDirective = /%([-_0^#]*)(\d*)([a-zA-Z%])/g;
const strftimeFlag = /%(?:[-_0^#]+\d*|\d+)[a-zA-Z]/;
/** The conversions that print numbers, and those of them padded with blanks by default. */
const numericConversions = new Set([...'CdegGHIjklmMsSuUVwWyY']);
const blankPadded = new Set([...'ekl']);

/** A directive's plain value given its glibc flags and width. */
function strftimeFlagged(value: string, { flags, width, conversion }: { flags: string; width: string; conversion: string }): string {
  let text = value;
  if (conversion === 'z') {
    // The offset is a signed number of four digits: `%_z` is `- 500`, `%-z` is `-500`. glibc pads the sign
    // to the width too, then the digits: `%6z` is `     -000500`.
    const digits = value.slice(1).replace(/^0+(?=.)/, '');
    const pad = flags.includes('-') ? '' : flags.includes('_') ? ' ' : '0';
    const size = width ? Number(width) : 4;
    const lead = width && pad ? ' '.repeat(Math.max(size - 1, 0)) : '';
    text = lead + value[0]! + (pad ? digits.padStart(size, pad) : digits);
  } else if (numericConversions.has(conversion)) {
    const digits = text.replace(/^[ 0]+(?=.)/, '');
    const pad = flags.includes('-') ? '' : flags.includes('_') ? ' ' : flags.includes('0') ? '0' : blankPadded.has(conversion) ? ' ' : '0';
    const size = width ? Number(width) : value.length;
    text = pad ? digits.padStart(size, pad) : digits;
  } else if (width) text = text.padStart(Number(width), flags.includes('0') ? '0' : ' ');
  if (flags.includes('^')) text = text.toUpperCase();
  if (flags.includes('#')) text = conversion === 'Z' || conversion === 'p' ? text.toLowerCase() : text.toUpperCase();
  return text;
}

const dateUsage =
  "Usage: date [OPTIONS] [+FMT] [[-s] TIME]\n\nDisplay time (using +FMT), or set time\n\n\t-u\t\tWork in UTC (don't convert to local time)\n" +
  "\t[-s] TIME\tSet time to TIME\n\t-d TIME\t\tDisplay TIME, not 'now'\n\t-D FMT\t\tFMT (strptime format) for -s/-d TIME conversion\n" +
  '\t-r FILE\t\tDisplay last modification time of FILE\n\t-R\t\tOutput RFC-2822 date\n\t-I[SPEC]\tOutput ISO-8601 date\n' +
  '\t\t\tSPEC=date (default), hours, minutes, seconds or ns\n\nRecognized TIME formats:\n\t@seconds_since_1970\n\thh:mm[:ss]\n' +
  "\t[YYYY.]MM.DD-hh:mm[:ss]\n\tYYYY-MM-DD hh:mm[:ss]\n\t[[[[[YY]YY]MM]DD]hh]mm[.ss]\n\t'date TIME' form accepts MMDDhhmm[[YY]YY][.ss] instead\n";

/** date's command line with each cluster of short options apart, as getopt32 reads "Rs:ud:r:D:I::" (`-ud @0` is `-u -d @0`; -I takes only what is glued to it). */
const dateOptions = (args: readonly string[]): string[] => apart(args, 'sdrD', 'I') as string[];

/**
 * busybox's `date -d STR`: STR read as parse_datestr reads it ({@link parseDate}), the fields it
 * leaves from today's midnight (date zeroes the time first); anything else `invalid date`. The rest
 * of date is just-bash's, given the time as `@SECONDS`.
 */
async function date(given: string[], ctx: CommandContext): Promise<ExecResult> {
  if (!ctx.origCommand) return { stdout: '', stderr: 'sh: date: not found\n', exitCode: 127 };
  const args = dateOptions(given);
  const iso = args.findIndex((a) => a.startsWith('-I'));
  if (iso >= 0) {
    // -I[SPEC]: ISO 8601 to the date (the default), the hour, minute or second, the zone as +hh:mm;
    // SPEC may be cut short (index_in_substrings: `-Id`), anything else is date's usage.
    const asked = args[iso]!.slice(2);
    const spec = asked === '' ? 'date' : ['date', 'hours', 'minutes', 'seconds'].find((s) => s.startsWith(asked));
    if (spec === undefined) return { stdout: '', stderr: `${banner}${dateUsage}`, exitCode: 1 };
    const format = { date: '+%Y-%m-%d', hours: '+%Y-%m-%dT%H%z', minutes: '+%Y-%m-%dT%H:%M%z', seconds: '+%Y-%m-%dT%H:%M:%S%z' }[spec]!;
    const res = await date([...args.slice(0, iso), ...args.slice(iso + 1), format], ctx);
    return res.exitCode ? res : { ...res, stdout: res.stdout.replace(/([+-]\d\d)(\d\d)$/m, '$1:$2') };
  }
  const reference = args.indexOf('-r');
  if (reference >= 0) {
    // -r FILE: the file's last modification.
    const file = args[reference + 1] ?? '';
    const st = await ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, file)).catch(() => undefined);
    if (!st) return { stdout: '', stderr: `date: can't stat '${file}': No such file or directory\n`, exitCode: 1 };
    return date([...args.slice(0, reference), '-d', `@${Math.floor(st.mtime.getTime() / 1000)}`, ...args.slice(reference + 2)], ctx);
  }
  const formatAt = args.findIndex((a) => a.startsWith('+'));
  if (formatAt >= 0 && strftimeFlag.test(args[formatAt]!)) {
    // glibc's strftime flags and widths (`%-d`, `%_H`, `%03d`, `%^a`, `%#Z`): each directive run plain, then padded or cased here.
    const wanted: { flags: string; width: string; conversion: string }[] = [];
    const marked = args[formatAt]!.replace(strftimeDirective, (whole, flags: string, width: string, conversion: string) => {
      if ((!flags && !width) || conversion === '%') return whole;
      wanted.push({ flags, width, conversion });
      return `\x01${wanted.length - 1}\x02%${conversion}\x03`;
    });
    const res = await date([...args.slice(0, formatAt), marked, ...args.slice(formatAt + 1)], ctx);
    return {
      ...res,
      stdout: res.stdout.replace(/\x01(\d+)\x02([^\x03]*)\x03/g, (_m, i: string, value: string) => strftimeFlagged(value, wanted[Number(i)]!)),
    };
  }
  // -u is busybox's TZ=UTC0 for the whole run, the date it reads included.
  const zone = args.some((a) => a === '--utc' || /^-[A-Za-z]*u/.test(a)) ? guestZone('UTC0') : zoneOf(ctx);
  const at = args.findIndex((a) => a.startsWith('-d') || a.startsWith('--date='));
  const option = args[at];
  const text =
    option === undefined ? undefined : option === '-d' ? args[at + 1] : option.startsWith('--') ? option.slice('--date='.length) : option.slice(2);
  if (text === undefined) return inZone(args, Math.floor(Date.now() / 1000), zone, ctx.origCommand);
  const midnight = localTime(zone, Date.now()).local;
  midnight.setUTCHours(0, 0, 0, 0);
  const hint = args.findIndex((a) => a.startsWith('-D'));
  const format = hint < 0 ? undefined : args[hint] === '-D' ? args[hint + 1] : args[hint]!.slice(2);
  const local = format === undefined ? undefined : strptime(text, format, midnight);
  const when = format === undefined ? parseDate(text, midnight, zone) : local && fromLocal(zone, local);
  if (!when) return { stdout: '', stderr: `date: invalid date '${text}'\n`, exitCode: 1 };
  const rest = args.filter((_a, i) => i !== at && !(i === at + 1 && option === '-d') && i !== hint && !(i === hint + 1 && args[hint] === '-D'));
  return inZone(rest, Math.floor(when.getTime() / 1000), zone, ctx.origCommand);
}

/**
 * just-bash's date run for `seconds` in the guest's `zone`: given the local time as UTC's, with
 * the zone's name, offset and the seconds themselves written into the format (`%Z`, `%z`, `%s`;
 * the default format and `-R`'s spelled out), for just-bash reads `TZ` through Intl's zones.
 */
function inZone(args: string[], seconds: number, zone: Zone, run: NonNullable<CommandContext['origCommand']>): Promise<ExecResult> {
  const { name, offset } = zone.at(seconds);
  const rfc = args.some((a) => a === '--rfc-email' || /^-[A-Za-z]*R/.test(a));
  const given = args.find((a) => a.startsWith('+'));
  const format = given?.slice(1) ?? (rfc ? '%a, %d %b %Y %H:%M:%S %z' : '%a %b %e %H:%M:%S %Z %Y');
  const written = format.replace(
    /%([-_0^#]*\d*)([Zzs%])|\x02%([Zzs])\x03/g,
    (whole, flags: string | undefined, c1: string | undefined, c2: string | undefined) => {
      const c = c1 ?? c2!;
      if (c === '%' || flags) return whole;
      const value = c === 'Z' ? name : c === 'z' ? offsetText(offset) : String(seconds);
      return c2 ? `\x02${value.replace(/%/g, '%%')}\x03` : value.replace(/%/g, '%%');
    },
  );
  const rest = args.filter((a) => a !== given && a !== '--rfc-email' && a !== '-R').map((a) => (/^-[A-Za-z]*R/.test(a) ? a.replace('R', '') : a));
  return run(['-u', ...rest, '-d', `@${seconds + offset}`, `+${written}`]);
}

/**
 * `date -D FORMAT`'s reading of the date (strptime): `%Y %m %d %H %M %S %y %b %T %F %%` and the
 * format's other characters as they are, the fields it does not set from `now`; undefined where
 * the text does not match it whole.
 */
function strptime(text: string, format: string, now: Date): Date | undefined {
  const f = [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()];
  const fields: Record<string, [number, number]> = { Y: [0, 4], m: [1, 2], d: [2, 2], H: [3, 2], M: [4, 2], S: [5, 2], y: [0, 2] };
  const expanded = format.replace(/%T/g, '%H:%M:%S').replace(/%F/g, '%Y-%m-%d');
  let at = 0;
  for (let i = 0; i < expanded.length; i++) {
    const c = expanded[i]!;
    const conversion = c === '%' ? expanded[++i] : undefined;
    if (conversion === undefined || conversion === '%') {
      if (text[at] !== (conversion ?? c)) return undefined;
      at++;
    } else if (conversion === 'b') {
      const month = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].indexOf(
        text.slice(at, at + 3).toLowerCase(),
      );
      if (month < 0) return undefined;
      f[1] = month + 1;
      at += 3;
    } else {
      const field = fields[conversion];
      const digits = field && /^\d+/.exec(text.slice(at, at + field[1]))?.[0];
      if (!field || !digits) return undefined;
      f[field[0]] = conversion === 'y' ? (Number(digits) < 69 ? 2000 : 1900) + Number(digits) : Number(digits);
      at += digits.length;
    }
  }
  if (at !== text.length) return undefined;
  const d = new Date(Date.UTC(f[0]!, f[1]! - 1, f[2]!, f[3]!, f[4]!, f[5]!));
  return d.getUTCMonth() === f[1]! - 1 ? d : undefined;
}

const basenameUsage =
  'Usage: basename FILE [SUFFIX] | -a FILE... | -s SUFFIX FILE...\n\nStrip directory path and SUFFIX from FILE\n\n\t-a\t\tAll arguments are FILEs\n\t-s SUFFIX\tRemove SUFFIX (implies -a)\n';
const dirnameUsage = 'Usage: dirname FILENAME\n\nStrip non-directory suffix from FILENAME\n';

/**
 * busybox's `basename FILE [SUFFIX]`, `-a FILE...`, `-s SUFFIX FILE...`: each FILE's last
 * component, trailing slashes dropped (`/` for a name of slashes alone), SUFFIX taken off unless it
 * is the whole of it.
 */
async function basename(args: string[]): Promise<ExecResult> {
  const parsed = getopt('basename', basenameUsage, args, 'a', 's', null, { untilOperand: true });
  if (isResult(parsed)) return parsed;
  const { opts, operands } = parsed;
  const all = opts.size > 0;
  if (operands.length === 0 || (!all && operands.length > 2)) return usage(basenameUsage);
  const suffix = all ? opts.get('s') : operands[1];
  const names = all ? operands : operands.slice(0, 1);
  return { stdout: names.map((name) => `${baseOf(name, typeof suffix === 'string' ? suffix : undefined)}\n`).join(''), stderr: '', exitCode: 0 };
}

function baseOf(name: string, suffix: string | undefined): string {
  const base = lastComponent(name);
  return suffix && base !== suffix && base.endsWith(suffix) ? base.slice(0, -suffix.length) : base;
}

/** busybox's `dirname FILENAME`: glibc's dirname(3), which keeps a leading `//` (`dirname //a` is `//`). */
async function dirname(args: string[]): Promise<ExecResult> {
  // It reads no options: `dirname -x` is `.`.
  if (args.length !== 1) return usage(dirnameUsage);
  return { stdout: `${glibcDirname(args[0]!)}\n`, stderr: '', exitCode: 0 };
}

function glibcDirname(path: string): string {
  let last = path.lastIndexOf('/');
  if (last > 0 && last === path.length - 1) {
    // Trailing slashes: look before them.
    let run = last;
    while (run > 0 && path[run - 1] === '/') run--;
    if (run > 0) last = path.lastIndexOf('/', run - 1);
  }
  if (last < 0) return '.';
  let run = last;
  while (run > 0 && path[run - 1] === '/') run--;
  if (run > 0) return path.slice(0, run);
  return last === 1 ? '//' : '/';
}

const programs: Record<string, (args: string[], ctx: CommandContext, umask: number) => Promise<ExecResult>> = {
  date,
  basename,
  dirname,
  rm,
  rmdir,
  mkdir,
  touch,
  ln,
  readlink,
  mv,
  cp,
  chmod,
};

/**
 * busybox 1.35's `rm`, `rmdir`, `mkdir`, `touch`, `ln`, `readlink`, `mv`, `cp` and `chmod` over the guest's
 * files, where just-bash's are GNU's in wording and some behaviour (`ln -s a DIR` made no DIR/a,
 * `touch /nosuch/x` made /nosuch, `rm -r ..` removed the parent): busybox's options, usages,
 * messages and exit codes, as the test beds' busybox answers them. What they make takes its mode
 * from the shell's umask as it is when they run.
 */
export function busyboxCoreutils(umask: () => number = () => defaultUmask): Command[] {
  return Object.entries(programs).map(([name, run]) => ({ name, execute: (args, ctx) => run(args, ctx, umask()) }));
}
