import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { banner } from './busybox-getopt.js';
import { mkdirs, stdinBytes, writeFile, type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';
import { stampText, zoneOf } from './guest-zone.js';

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

const cpioUsage =
  `${banner}Usage: cpio [-dmvu] [-F FILE] [-R USER[:GRP]] [-H newc] [-tio] [EXTR_FILE]...\n\n` +
  'Extract (-i) or list (-t) files from a cpio archive, or\ntake file list from stdin and create an archive (-o)\n\n' +
  'Main operation mode:\n\t-t\tList\n\t-i\tExtract EXTR_FILEs (or all)\n\t-o\tCreate (requires -H newc)\n' +
  'Options:\n\t-H newc\tArchive format\n\t-d\tMake leading directories\n\t-m\tRestore mtime\n\t-v\tVerbose\n\t-u\tOverwrite\n' +
  '\t-F FILE\tInput (-t,-i,-p) or output (-o) file\n\t-R USER[:GRP]\tSet owner of created files\n\t-L\tDereference symlinks\n' +
  '\t-0\tNUL terminated input\n\t--ignore-devno\n\t--renumber-inodes\n';

/** One entry of a newc cpio archive. */
export interface CpioEntry {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  data: Buffer;
}

const cpioMagic = '070701';
const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/** The entries of a newc archive, and how many bytes up to its trailer; a string: busybox's message. */
export function readCpio(archive: Buffer): { entries: CpioEntry[]; length: number } | string {
  const entries: CpioEntry[] = [];
  let at = 0;
  for (;;) {
    if (archive.length - at < 110) return 'short read';
    const header = archive.subarray(at, at + 110).toString('latin1');
    if (header.slice(0, 6) !== cpioMagic && header.slice(0, 6) !== '070702') return 'unsupported cpio format, use newc or crc';
    const field = (i: number): number => parseInt(header.slice(6 + i * 8, 14 + i * 8), 16);
    const nameSize = field(11);
    const size = field(6);
    const nameAt = at + 110;
    const name = archive.subarray(nameAt, nameAt + nameSize - 1).toString('utf8');
    const dataAt = nameAt + nameSize + pad4(110 + nameSize);
    if (dataAt + size > archive.length) return 'short read';
    at = dataAt + size + pad4(size);
    if (name === 'TRAILER!!!') return { entries, length: dataAt + size };
    entries.push({ name, mode: field(1), uid: field(2), gid: field(3), mtime: field(5), data: archive.subarray(dataAt, dataAt + size) });
  }
}

/** The newc records of the entries, and the trailer after them when `trailer` (busybox pads nothing). */
function writeCpio(entries: CpioEntry[], trailer: boolean): Buffer {
  const parts: Buffer[] = [];
  const add = (e: CpioEntry, ino: number): void => {
    const name = Buffer.from(`${e.name}\0`, 'utf8');
    const fields = [ino, e.mode, e.uid, e.gid, 1, e.mtime, e.data.length, 0, 0, 0, 0, name.length, 0];
    parts.push(Buffer.from(cpioMagic + fields.map((f) => f.toString(16).toUpperCase().padStart(8, '0')).join(''), 'latin1'));
    parts.push(name, Buffer.alloc(pad4(110 + name.length)), e.data, Buffer.alloc(pad4(e.data.length)));
  };
  entries.forEach((e, i) => add(e, i + 1));
  if (trailer) add({ name: 'TRAILER!!!', mode: 0, uid: 0, gid: 0, mtime: 0, data: Buffer.alloc(0) }, 0);
  return Buffer.concat(parts);
}

const blocks = (bytes: number): string => `${Math.ceil(bytes / 512)} blocks\n`;

/** `ls -l`'s type and permission letters of a mode. */
function modeLetters(mode: number): string {
  const type = { 0o040000: 'd', 0o120000: 'l', 0o010000: 'p', 0o020000: 'c', 0o060000: 'b' }[mode & 0o170000] ?? '-';
  const rwx = (bits: number): string => `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${bits & 1 ? 'x' : '-'}`;
  return type + rwx(mode >> 6) + rwx(mode >> 3) + rwx(mode);
}

/** A name pattern of cpio's EXTR_FILE (shell wildcards `*` and `?`). */
function matches(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

/** The entries of the guest's /etc/passwd or /etc/group, split at their colons. */
async function table(host: ProgramHost, file: '/etc/passwd' | '/etc/group'): Promise<string[][]> {
  const text = await host.fs.read(file).then(
    (b) => b.toString('utf8'),
    () => '',
  );
  return text.split('\n').map((l) => l.split(':'));
}

/**
 * `-R USER[:GRP]` as busybox reads it (parse_chown_usergroup_or_die): `USER` sets the owner only,
 * `:GRP` the group only, `USER:` the owner and the user's login group (a number not in
 * /etc/passwd: that number), `USER:GRP` both (`.` for `:` too); names or numbers. A string:
 * busybox's message for a name it does not know.
 */
async function parseOwner(host: ProgramHost, spec: string): Promise<{ uid?: number; gid?: number } | string> {
  const numeric = (text: string) => (/^\d+$/.test(text) ? Number(text) : undefined);
  const users = await table(host, '/etc/passwd');
  const groups = await table(host, '/etc/group');
  const userId = (name: string) => numeric(name) ?? numeric(users.find((f) => f[0] === name)?.[2] ?? '');
  const groupId = (name: string) => numeric(name) ?? numeric(groups.find((f) => f[0] === name)?.[2] ?? '');
  const at = spec.includes('.') ? spec.indexOf('.') : spec.indexOf(':');
  if (at < 0) {
    const uid = userId(spec);
    return uid === undefined ? `unknown user ${spec}` : { uid };
  }
  if (at === 0) {
    const gid = groupId(spec.slice(1));
    return gid === undefined ? `unknown group ${spec.slice(1)}` : { gid };
  }
  const [user, group] = [spec.slice(0, at), spec.slice(at + 1)];
  const shown = group === '' ? user : `${user}:${group}`;
  const uid = userId(user);
  const login = numeric(users.find((f) => (numeric(user) === undefined ? f[0] === user : f[2] === user))?.[3] ?? '') ?? numeric(user);
  const gid = group === '' ? login : groupId(group);
  return uid === undefined || gid === undefined ? `unknown user/group ${shown}` : { uid, gid };
}

/**
 * busybox's `cpio` in the newc format: `-o -H newc` archives the names read on stdin (`-L`: what
 * a symlink points to), `-t` lists (`-v` long), `-i` extracts (`-d` makes directories, `-u`
 * replaces what is there, `-m` keeps mtimes; root gives each entry the archive's owner), `-F`
 * names the archive, `-R` sets the owner of what is archived, listed or extracted; "N blocks" on
 * stderr as busybox counts them.
 */
export function cpioProgram(host: ProgramHost): Command {
  return {
    name: 'cpio',
    async execute(args, ctx) {
      const flags = new Set<string>();
      const patterns: string[] = [];
      let format: string | undefined;
      let file: string | undefined;
      let ownerSpec: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-H') format = args[++i];
        else if (a === '-F') file = args[++i];
        else if (a === '-R') ownerSpec = args[++i];
        else if (a.startsWith('--')) continue;
        else if (a.startsWith('-') && a.length > 1) {
          for (const [j, c] of [...a.slice(1)].entries()) {
            if (c === 'H' || c === 'F' || c === 'R') {
              const value = a.slice(j + 2) || args[++i];
              if (c === 'H') format = value;
              else if (c === 'F') file = value;
              else ownerSpec = value;
              break;
            }
            if (!'tiodmvuL0'.includes(c)) return fail(`cpio: invalid option -- '${c}'\n${cpioUsage}`);
            flags.add(c);
          }
        } else patterns.push(a);
      }
      const owner = ownerSpec === undefined ? {} : await parseOwner(host, ownerSpec);
      if (typeof owner === 'string') return fail(`cpio: ${owner}\n`);
      if (flags.has('o')) {
        if (format !== 'newc') return fail(cpioUsage);
        const names = String(ctx.stdin)
          .split(flags.has('0') ? '\0' : '\n')
          .filter((n) => n !== '');
        const entries: CpioEntry[] = [];
        // busybox writes each entry as it goes and stops at the first name it cannot read (no trailer then).
        let missing: string | undefined;
        for (const name of names) {
          const given = posix.resolve(ctx.cwd, name);
          // -L archives what a symlink points to, under the symlink's name.
          const path = flags.has('L') ? await host.fs.memory.realpath(given).catch(() => given) : given;
          const entry = await host.fs.entry(path);
          if (!entry || (flags.has('L') && entry.type === 'symlink')) {
            missing = `cpio: ${name}: No such file or directory\n`;
            break;
          }
          const type = entry.type === 'directory' ? 0o040000 : entry.type === 'symlink' ? 0o120000 : 0o100000;
          entries.push({
            name: name.replace(/^\.\/(?=.)/, ''),
            mode: type | entry.mode,
            uid: owner.uid ?? entry.uid,
            gid: owner.gid ?? entry.gid,
            mtime: Math.floor(entry.mtime.getTime() / 1000),
            data: entry.type === 'directory' ? Buffer.alloc(0) : await host.fs.read(path),
          });
        }
        const archive = writeCpio(entries, missing === undefined);
        const code = missing === undefined ? 0 : 1;
        if (file !== undefined) {
          await writeFile(host, posix.resolve(ctx.cwd, file), archive);
          return { stdout: '', stderr: missing ?? '', exitCode: code };
        }
        return bytesOutput(archive, missing ?? '', code);
      }
      if (!flags.has('t') && !flags.has('i')) return fail(cpioUsage);
      let data: Buffer;
      if (file === undefined) data = stdinBytes(ctx);
      else {
        const path = posix.resolve(ctx.cwd, file);
        if (!(await host.fs.entry(path))) return fail(`cpio: can't open '${file}': No such file or directory\n`);
        data = await host.fs.read(path);
      }
      // No input at all is an archive with nothing in it, and no trailer to count blocks to.
      if (data.length === 0) return { stdout: '', stderr: '', exitCode: 0 };
      const archive = readCpio(data);
      if (typeof archive === 'string') return fail(`cpio: ${archive}\n`);
      const picked = archive.entries
        .filter((e) => patterns.length === 0 || patterns.some((p) => matches(p, e.name)))
        .map((e) => ({ ...e, uid: owner.uid ?? e.uid, gid: owner.gid ?? e.gid }));
      // Root gives what it extracts the archive's owners (chown, so not to a symlink); anyone else's chown fails and it keeps its own.
      const ownerOf = (e: CpioEntry) => (host.uid === 0 ? { uid: e.uid, gid: e.gid } : { uid: host.uid, gid: host.gid });
      let stdout = '';
      let stderr = '';
      for (const e of picked) {
        const symlink = (e.mode & 0o170000) === 0o120000;
        if (flags.has('t')) {
          if (!flags.has('v')) stdout += `${e.name}\n`;
          else {
            const date = stampText(zoneOf(ctx), e.mtime * 1000);
            const size = symlink || (e.mode & 0o170000) === 0o040000 ? 0 : e.data.length;
            stdout += `${modeLetters(e.mode)} ${e.uid}/${e.gid} ${String(size).padStart(9)} ${date} ${e.name}${symlink ? ` -> ${e.data.toString('utf8')}` : ''}\n`;
          }
          continue;
        }
        const target = posix.resolve(ctx.cwd, e.name);
        const existing = await host.fs.entry(target);
        if (flags.has('v')) stderr += `${e.name}\n`;
        if ((e.mode & 0o170000) === 0o040000) {
          if (!existing) {
            if (flags.has('d')) await mkdirs(host, posix.dirname(target));
            await host.fs.mkdir(target, { ...ownerOf(e), mode: e.mode & 0o7777 });
          }
          continue;
        }
        if (existing) {
          if (!flags.has('u')) {
            stderr += `cpio: ${e.name} not created: newer or same age file exists\n`;
            continue;
          }
          await host.fs.remove(target);
        }
        if (flags.has('d')) await mkdirs(host, posix.dirname(target));
        else if (!(await host.fs.entry(posix.dirname(target)))) {
          stderr += `cpio: can't open '${e.name}': No such file or directory\n`;
          continue;
        }
        if (symlink) await host.fs.symlink(e.data.toString('utf8'), target, host);
        else await host.fs.write(target, e.data, { ...ownerOf(e), mode: e.mode & 0o7777 });
        if (flags.has('m') && !symlink) await host.fs.memory.utimes(target, new Date(e.mtime * 1000), new Date(e.mtime * 1000));
      }
      stderr += blocks(archive.length);
      return { stdout, stderr, exitCode: 0 };
    },
  };
}
