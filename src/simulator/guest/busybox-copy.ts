import type { CommandContext, ExecResult } from 'just-bash';
import { Answers, Files, SysError, done, joinPath, lastComponent, outcome, say, type Outcome } from './busybox-file-calls.js';
import { getopt, isResult, usage } from './busybox-getopt.js';
import { newEntryMode } from './guest-fs.js';
import { isCharMode } from './guest-devices.js';
import { errnoOf, errnos } from './fs-error.js';

/** The usages of mv and cp, as busybox prints them (to stderr, exit 1) for a wrong call. */
const usages = {
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
};

/** cp_mv_stat: 0 nothing there, 1 a file, 3 a directory; a path that cannot be reached is an error. */
async function cpMvStat(program: string, files: Files, path: string, follow: boolean, o: Outcome): Promise<0 | 1 | 3 | -1> {
  const st = follow ? await files.stat(path) : await files.lstat(path);
  if (st) return st.kind === 'directory' ? 3 : 1;
  const why = await files.missing(path);
  if (why === 'ENOENT') return 0;
  o.err(
    why === 'ENOTDIR'
      ? `${program}: can't stat '${path}': Path has non-directory component\n`
      : say(program, `can't stat '${path}'`, new SysError(why)),
  );
  return -1;
}

/**
 * busybox's `mv`: rename(2) onto DEST, or into DIRECTORY (-t, or a last operand that is one); -f,
 * -i and -n (the last given wins), -T, -v; its messages (`can't rename`, `can't stat … Path has
 * non-directory component`).
 */
export async function mv(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const p = getopt('mv', usages.mv, args, 'finTv', 't', {
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
  if (operands.length + (typeof dir === 'string' ? 1 : 0) < 2) return usage(usages.mv);
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  // -f, -i and -n cancel each other: the last given wins.
  const lastOf = (c: string) => Math.max(...args.map((a, i) => (/^-[a-zA-Z]+$/.test(a) && a.includes(c) ? i : -1)));
  const winner = ['f', 'i', 'n'].filter((c) => p.opts.has(c)).sort((a, b) => lastOf(b) - lastOf(a))[0];
  const last = typeof dir === 'string' ? dir : operands.pop()!;
  // busybox prints -v's line once it is done with an operand, whatever became of it (mv.c's RET_0:
  // a failed rename, one -n or a refused -i skipped, a destination it could not stat).
  const verbose = (source: string, dest: string): void => {
    if (p.opts.has('v')) o.out(`'${source}' -> '${dest}'\n`);
  };
  const move = async (source: string, dest: string, destKind: 0 | 1 | 3): Promise<void> => {
    if (destKind && winner === 'i') o.err(`mv: overwrite '${dest}'? `);
    try {
      if (!destKind || (winner !== 'n' && (winner !== 'i' || answers.yes()))) await files.rename(source, dest);
    } catch (e) {
      // Across filesystems mv copies, and the only entries the guest cannot rename there are devices, which the copy's mknod(2) cannot make.
      if (errnoOf(e) === 'EXDEV') o.err(say('mv', `can't create '${dest}'`, new SysError('EPERM')));
      else o.err(say('mv', `can't rename '${source}'`, e));
      o.failed = true;
    }
    verbose(source, dest);
  };
  if (operands.length === 1 && typeof dir !== 'string') {
    const d = await cpMvStat('mv', files, last, true, o);
    if (d === -1) return done(o, true);
    // -T renames onto DEST as it is (an empty directory is replaced).
    if (d !== 3 || p.opts.has('T')) return (await move(operands[0]!, last, d), done(o));
  }
  for (const source of operands) {
    const dest = joinPath(last, lastComponent(source));
    const d = await cpMvStat('mv', files, dest, true, o);
    if (d === -1) {
      o.failed = true;
      verbose(source, dest);
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

/**
 * busybox's `cp`: files, and trees with -r/-R/-a (symlinks kept as symlinks, the directories it
 * made remembered to refuse copying a tree into itself); -p, -d/-P, -L, -H, -f, -i, -n, -u, -l,
 * -s, -T, -t, -v; its messages (`can't stat`, `omitting directory`, `are the same file`).
 */
export async function cp(args: string[], ctx: CommandContext, umask: number): Promise<ExecResult> {
  const p = getopt('cp', usages.cp, args, 'arRPdLHpfinlsTuv', 't', {
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
  if (operands.length + (typeof dir === 'string' ? 1 : 0) < 2) return usage(usages.cp);
  const files = new Files(ctx.fs, ctx.cwd);
  const answers = new Answers(String(ctx.stdin ?? ''));
  const o = outcome();
  const last = typeof dir === 'string' ? dir : operands.pop()!;
  const made = new Set<string>();
  const copy = async (source: string, dest: string, top: boolean): Promise<boolean> => {
    const follow = !opt.keepLinks || (top && has('H'));
    const s = follow ? await files.stat(source) : await files.lstat(source);
    if (!s) {
      o.err(say('cp', `can't stat '${source}'`, new SysError(await files.missing(source))));
      return false;
    }
    const d = await files.lstat(dest);
    if (!d) {
      const why = await files.missing(dest);
      if (why !== 'ENOENT') {
        o.err(say('cp', `can't stat '${dest}'`, new SysError(why)));
        return false;
      }
    }
    const srcAbs = files.abs(source);
    const destAbs = files.abs(dest);
    if (d && (await ctx.fs.realpath(srcAbs).catch(() => srcAbs)) === (await ctx.fs.realpath(destAbs).catch(() => destAbs))) {
      o.err(`cp: '${source}' and '${dest}' are the same file\n`);
      return false;
    }
    if (s.kind === 'directory') {
      if (!opt.recurse) {
        o.err(`cp: omitting directory '${source}'\n`);
        return false;
      }
      // busybox remembers the directories it made: meeting one as a source is copying a tree into itself.
      if (made.has(srcAbs)) {
        o.err(`cp: recursion detected, omitting directory '${source}'\n`);
        return false;
      }
      if (d && d.kind !== 'directory' && (await files.stat(dest))?.kind !== 'directory') {
        o.err(`cp: target '${dest}' is not a directory\n`);
        return false;
      }
      if (!d) {
        try {
          await files.mkdir(dest, newEntryMode(s.mode, umask) | 0o700);
          made.add(destAbs);
        } catch (e) {
          o.err(say('cp', `can't create directory '${dest}'`, e));
          return false;
        }
      }
      let ok = true;
      for (const name of await ctx.fs.readdir(srcAbs)) if (!(await copy(joinPath(source, name), joinPath(dest, name), false))) ok = false;
      // A directory is said once its entries are copied.
      if (p.opts.has('v')) o.out(`'${source}' -> '${dest}'\n`);
      if (opt.preserve || !d) await ctx.fs.chmod(destAbs, opt.preserve ? s.mode : newEntryMode(s.mode, umask));
      if (opt.preserve) await ctx.fs.utimes(destAbs, s.mtime, s.mtime);
      return ok;
    }
    if (d) {
      if (opt.noClobber) return true;
      if (opt.update && d.mtime >= s.mtime) return true;
      if (opt.interactive) {
        o.err(`cp: overwrite '${dest}'? `);
        if (!answers.yes()) return true;
      }
      if (d.kind === 'directory') {
        o.err(`cp: can't create '${dest}': Is a directory\n`);
        return false;
      }
    }
    if (p.opts.has('v')) o.out(`'${source}' -> '${dest}'\n`);
    try {
      if (!d) await files.parentReady(dest);
      if (opt.links || s.kind === 'symlink') {
        if (d) await ctx.fs.rm(destAbs);
        if (s.kind === 'symlink') await ctx.fs.symlink(await ctx.fs.readlink(srcAbs), destAbs);
        else if (opt.links === 'soft') await ctx.fs.symlink(source, destAbs);
        else await ctx.fs.link(srcAbs, destAbs);
        return true;
      }
      // A device copied recursively is made anew with mknod(2), which the beds' containers refuse.
      if (opt.recurse && isCharMode((await ctx.fs.lstat(srcAbs)).mode)) throw new SysError('EPERM');
      // The source is opened first: one the user may not read is `can't open` (EACCES), nothing made.
      let data: Uint8Array;
      try {
        data = await ctx.fs.readFileBuffer(srcAbs);
      } catch (e) {
        o.err(say('cp', `can't open '${source}'`, e));
        return false;
      }
      if (d?.kind === 'symlink') await ctx.fs.rm(destAbs);
      try {
        await ctx.fs.writeFile(destAbs, data);
      } catch (e) {
        // Opened, the write fails (/dev/full; past the guest's 1 GiB): bb_copyfd's words.
        if (errnoOf(e) !== 'ENOSPC') throw e;
        o.err(`cp: write error: ${errnos.ENOSPC}\n`);
        return false;
      }
      if (!d || d.kind === 'symlink') await ctx.fs.chmod(destAbs, opt.preserve ? s.mode : newEntryMode(s.mode, umask));
      else if (opt.preserve) await ctx.fs.chmod(destAbs, s.mode);
      if (opt.preserve) await ctx.fs.utimes(destAbs, s.mtime, s.mtime);
    } catch (e) {
      o.err(say('cp', `can't create '${dest}'`, e));
      return false;
    }
    return true;
  };
  if (operands.length === 1 && typeof dir !== 'string') {
    const s = await cpMvStat('cp', files, operands[0]!, !opt.keepLinks || has('H'), o);
    if (s === -1) return done(o, true);
    const d = await cpMvStat('cp', files, last, true, o);
    if (d === -1) return done(o, true);
    if (has('T') || !((s | d) & 2) || (opt.recurse && s === 3 && d === 0)) {
      o.failed = !(await copy(operands[0]!, last, true));
      return done(o);
    }
  }
  for (const source of operands) if (!(await copy(source, joinPath(last, lastComponent(source)), true))) o.failed = true;
  return done(o);
}
