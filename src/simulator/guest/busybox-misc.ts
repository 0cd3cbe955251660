import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, suffixed } from './busybox-getopt.js';
import { newEntryMode } from './guest-fs.js';
import { umaskOf, type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';
import { shellQuote } from './program-run.js';
import { guestZone, localTime, zoneOf, type Zone } from './guest-zone.js';
import { errnoOf, errnos } from './fs-error.js';

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

const usages: Record<string, string> = {
  factor: 'Usage: factor [NUMBER]...\n\nPrint prime factors\n',
  uuencode: 'Usage: uuencode [-m] [FILE] STORED_FILENAME\n\nUuencode FILE (or stdin) to stdout\n\n\t-m\tUse base64 encoding per RFC1521\n',
  uudecode: 'Usage: uudecode [-o OUTFILE] [INFILE]\n\nUudecode a file\nFinds OUTFILE in uuencoded source unless -o is given\n',
  fallocate: 'Usage: fallocate [-o OFS] -l LEN FILE\n\nPreallocate space for FILE\n\n\t-o OFS\tOffset of range\n\t-l LEN\tLength of range\n',
  'run-parts':
    'Usage: run-parts [-a ARG]... [-u UMASK] [--reverse] [--test] [--exit-on-error] DIRECTORY\n\nRun a bunch of scripts in DIRECTORY\n\n' +
    '\t-a ARG\t\tPass ARG as argument to scripts\n\t-u UMASK\tSet UMASK before running scripts\n\t--reverse\tReverse execution order\n' +
    '\t--test\t\tDry run\n\t--exit-on-error\tExit if a script exits with non-zero\n',
  shred:
    'Usage: shred [-fuz] [-n N] [-s SIZE] FILE...\n\nOverwrite/delete FILEs\n\n\t-f\tChmod to ensure writability\n\t-s SIZE\tSize to write\n\t-n N\tOverwrite N times (default 3)\n\t-z\tFinal overwrite with zeros\n\t-u\tRemove file\n',
};
const usage = (name: string): ExecResult => fail(`${banner}${usages[name]}`);

/** A file operand's bytes, or busybox's "can't open" line for it. */
async function readOperand(host: ProgramHost, ctx: CommandContext, program: string, file: string): Promise<Buffer | string> {
  const path = posix.resolve(ctx.cwd, file);
  const entry = await host.fs.entry(path);
  if (entry?.type !== 'file' && entry?.type !== 'symlink') return `${program}: can't open '${file}': No such file or directory\n`;
  return host.fs.read(path);
}

/** A size with busybox's suffixes (k, m, g: powers of 1024; b: 512). */
function sizeOf(text: string): number | undefined {
  return suffixed(text, { b: 512, k: 1024, K: 1024, m: 1024 ** 2, M: 1024 ** 2, g: 1024 ** 3, G: 1024 ** 3 });
}

/** The prime factors of n, smallest first (trial division: the numbers scripts factor are small). */
function primeFactors(n: bigint): bigint[] {
  const out: bigint[] = [];
  if (n < 2n) return out;
  for (const p of [2n, 3n]) {
    while (n % p === 0n) {
      out.push(p);
      n /= p;
    }
  }
  for (let d = 5n; d * d <= n; d += 6n) {
    for (const p of [d, d + 2n]) {
      while (n % p === 0n) {
        out.push(p);
        n /= p;
      }
    }
  }
  if (n > 1n) out.push(n);
  return out;
}

/** uuencode's table: a 6-bit value is the character 32 + value, with 0 written as a backquote. */
const uuChar = (v: number): string => (v === 0 ? '`' : String.fromCharCode(32 + v));

/** The body of a traditional uuencoding (45 bytes a line) or of a base64 one (`-m`), and its end. */
function uuencodeBody(data: Buffer, base64: boolean): string {
  let out = '';
  for (let at = 0; at < data.length; at += 45) {
    const line = data.subarray(at, at + 45);
    if (base64) {
      out += `${line.toString('base64')}\n`;
      continue;
    }
    out += uuChar(line.length);
    for (let i = 0; i < line.length; i += 3) {
      const [a = 0, b = 0, c = 0] = [line[i], line[i + 1], line[i + 2]];
      out += uuChar(a >> 2) + uuChar(((a << 4) | (b >> 4)) & 63) + uuChar(((b << 2) | (c >> 6)) & 63) + uuChar(c & 63);
    }
    out += '\n';
  }
  return base64 ? `${out}====\n` : `${out}\`\nend\n`;
}

/** Decodes a traditional uuencoded body (the lines after `begin`, up to `end`). */
function uudecodeBody(lines: string[]): Buffer {
  const bytes: number[] = [];
  const value = (ch: string | undefined): number => ((ch ?? '`').charCodeAt(0) - 32) & 63;
  for (const line of lines) {
    if (line === 'end') break;
    const n = value(line[0]);
    if (n === 0) continue;
    const got: number[] = [];
    for (let i = 1; got.length < n; i += 4) {
      const [a, b, c, d] = [value(line[i]), value(line[i + 1]), value(line[i + 2]), value(line[i + 3])];
      got.push(((a << 2) | (b >> 4)) & 255, ((b << 4) | (c >> 2)) & 255, ((c << 6) | d) & 255);
    }
    bytes.push(...got.slice(0, n));
  }
  return Buffer.from(bytes);
}

const pad2 = (n: number): string => String(n).padStart(2, '0');
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** strftime's common conversions of `ms` in `zone`. */
function strftime(format: string, ms: number, zone: Zone): string {
  const t = localTime(zone, ms).local;
  const fields: Record<string, () => string> = {
    Y: () => String(t.getUTCFullYear()),
    y: () => pad2(t.getUTCFullYear() % 100),
    m: () => pad2(t.getUTCMonth() + 1),
    d: () => pad2(t.getUTCDate()),
    e: () => String(t.getUTCDate()).padStart(2),
    b: () => months[t.getUTCMonth()]!,
    H: () => pad2(t.getUTCHours()),
    M: () => pad2(t.getUTCMinutes()),
    S: () => pad2(t.getUTCSeconds()),
    s: () => String(Math.floor(ms / 1000)),
    T: () => `${pad2(t.getUTCHours())}:${pad2(t.getUTCMinutes())}:${pad2(t.getUTCSeconds())}`,
    '%': () => '%',
  };
  return format.replace(/%(.)/g, (m, c: string) => fields[c]?.() ?? m);
}

/**
 * Small busybox programs that work on files and text only: `nologin`, `factor`, `crc32`,
 * `uuencode`/`uudecode`, `fallocate`, `shred`, `nuke`, `dnsdomainname` (no resolver: the lookup
 * fails, as in the beds' containers without a network), `last` (no `/var/log/wtmp`), `ts` and
 * `run-parts`. Output, messages and exit codes are busybox 1.35's on the LXD 5.0.2 test bed.
 */
export function busyboxMisc(host: ProgramHost): Command[] {
  const nologin: Command = { name: 'nologin', execute: async () => ({ stdout: 'This account is not available\n', stderr: '', exitCode: 1 }) };
  const factor: Command = {
    name: 'factor',
    async execute(args, ctx) {
      const numbers = args.length ? args : String(ctx.stdin).split(/\s+/).filter(Boolean);
      let stdout = '';
      for (const n of numbers) {
        if (!/^\d+$/.test(n)) return { ...usage('factor'), stdout };
        const value = BigInt(n);
        stdout += `${value}:${primeFactors(value)
          .map((f) => ` ${f}`)
          .join('')}\n`;
      }
      return ok(stdout);
    },
  };
  const crc: Command = {
    name: 'crc32',
    async execute(args, ctx) {
      if (args.length === 0)
        return ok(
          `${crc32(Buffer.from(String(ctx.stdin), 'latin1'))
            .toString(16)
            .padStart(8, '0')}\n`,
        );
      let stdout = '';
      let stderr = '';
      for (const f of args) {
        const data = await readOperand(host, ctx, 'crc32', f);
        if (typeof data === 'string') stderr += data;
        else stdout += `${crc32(data).toString(16).padStart(8, '0')} ${f}\n`;
      }
      return { stdout, stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const uuencode: Command = {
    name: 'uuencode',
    async execute(args, ctx) {
      const base64 = args.includes('-m');
      const operands = args.filter((a) => a !== '-m');
      if (operands.length < 1 || operands.length > 2) return usage('uuencode');
      const name = operands[operands.length - 1]!;
      let data: Buffer = Buffer.from(String(ctx.stdin), 'latin1');
      let mode = 0o644;
      if (operands.length === 2 && operands[0] !== '-') {
        const read = await readOperand(host, ctx, 'uuencode', operands[0]!);
        if (typeof read === 'string') return fail(read);
        data = read;
        mode = (await host.fs.entry(posix.resolve(ctx.cwd, operands[0]!)))!.mode & 0o777;
      }
      return ok(`begin${base64 ? '-base64' : ''} ${mode.toString(8)} ${name}\n${uuencodeBody(data, base64)}`);
    },
  };
  const uudecode: Command = {
    name: 'uudecode',
    async execute(args, ctx) {
      let out: string | undefined;
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (args[i] === '-o') out = args[++i];
        else operands.push(args[i]!);
      }
      if (operands.length > 1) return usage('uudecode');
      let text = String(ctx.stdin);
      if (operands[0] !== undefined && operands[0] !== '-') {
        const read = await readOperand(host, ctx, 'uudecode', operands[0]);
        if (typeof read === 'string') return fail(read);
        text = read.toString('latin1');
      }
      const lines = text.split('\n');
      const at = lines.findIndex((l) => /^begin(-base64)? [0-7]+ ./.test(l));
      if (at < 0) return fail("uudecode: no 'begin' line\n");
      const [, b64, modeText, name] = /^begin(-base64)? ([0-7]+) (.*)$/.exec(lines[at]!)!;
      const body = lines.slice(at + 1);
      const data = b64 ? Buffer.from(body.slice(0, Math.max(0, body.indexOf('===='))).join(''), 'base64') : uudecodeBody(body);
      const target = out ?? name!;
      if (target === '-' || target === '/dev/stdout') {
        return bytesOutput(data);
      }
      const path = posix.resolve(ctx.cwd, target);
      const existing = await host.fs.entry(path);
      if (existing) await host.fs.remove(path);
      await host.fs.write(path, data, { uid: host.uid, gid: host.gid, mode: parseInt(modeText!, 8) & 0o777 });
      return ok();
    },
  };
  const fallocate: Command = {
    name: 'fallocate',
    async execute(args, ctx) {
      let offset = 0;
      let length: number | undefined;
      const files: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-o' || a === '-l') {
          const value = sizeOf(args[++i] ?? '');
          if (value === undefined) return fail(`fallocate: invalid number '${args[i] ?? ''}'\n`);
          if (a === '-o') offset = value;
          else length = value;
        } else files.push(a);
      }
      if (length === undefined || files.length !== 1) return usage('fallocate');
      const path = posix.resolve(ctx.cwd, files[0]!);
      const entry = await host.fs.entry(path);
      if (entry?.type === 'directory') return fail(`fallocate: can't open '${files[0]}': Is a directory\n`);
      try {
        await host.fs.allocate(path, offset, length, { uid: host.uid, gid: host.gid, mode: newEntryMode(0o666, umaskOf(host)) });
      } catch (e) {
        // A device (ENODEV); past the 1 GiB the guest's memory holds (ENOSPC).
        const code = errnoOf(e);
        if (code !== 'ENODEV' && code !== 'ENOSPC') throw e;
        return fail(`fallocate: fallocate '${files[0]}': ${errnos[code]}\n`);
      }
      return ok();
    },
  };
  const shred: Command = {
    name: 'shred',
    async execute(args, ctx) {
      const flags = new Set<string>();
      const files: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-n' || a === '-s') i++;
        else if (a.startsWith('-') && a.length > 1) for (const c of a.slice(1)) flags.add(c);
        else files.push(a);
      }
      if (files.length === 0) return usage('shred');
      let stderr = '';
      for (const f of files) {
        const path = posix.resolve(ctx.cwd, f);
        const entry = await host.fs.entry(path);
        if (entry?.type !== 'file') {
          stderr += `shred: can't open '${f}': No such file or directory\n`;
          continue;
        }
        if (flags.has('u')) {
          await host.fs.remove(path);
          continue;
        }
        // What the last pass leaves: zeros with -z, else random bytes.
        const size = entry.size;
        await host.fs.write(path, flags.has('z') ? Buffer.alloc(size) : randomBytes(size), entry);
      }
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const nuke: Command = {
    name: 'nuke',
    async execute(args, ctx) {
      for (const d of args) {
        const path = posix.resolve(ctx.cwd, d);
        if (await host.fs.entry(path)) await ctx.fs.rm(path, { recursive: true, force: true });
      }
      return ok();
    },
  };
  const dnsdomainname: Command = {
    name: 'dnsdomainname',
    async execute(_args, ctx) {
      // The instance's name, as the guest's own `hostname` says it.
      const name = (await ctx.exec!('hostname', { cwd: ctx.cwd, stdin: '' })).stdout.trim();
      return fail(`dnsdomainname: ${name}: Host name lookup failure\n`);
    },
  };
  const last: Command = {
    name: 'last',
    async execute() {
      if (!(await host.fs.entry('/var/log/wtmp'))) return fail("last: can't open '/var/log/wtmp': No such file or directory\n");
      return ok();
    },
  };
  const ts: Command = {
    name: 'ts',
    async execute(args, ctx) {
      const format = args.find((a) => !a.startsWith('-')) ?? (args.some((a) => /^-[is]+$/.test(a)) ? '%H:%M:%S' : '%b %d %H:%M:%S');
      const relative = args.some((a) => /^-[is]+$/.test(a));
      const text = String(ctx.stdin);
      const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text === '' ? [] : text.split('\n');
      // Input is read whole here, so each line comes at the same time: relative stamps are 0.
      const stamp = relative ? strftime(format, 0, guestZone(undefined)) : strftime(format, Date.now(), zoneOf(ctx));
      return ok(lines.map((l) => `${stamp} ${l}\n`).join(''));
    },
  };
  const runParts: Command = {
    name: 'run-parts',
    async execute(args, ctx) {
      const extra: string[] = [];
      let reverse = false;
      let test = false;
      let exitOnError = false;
      const dirs: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-a') extra.push(args[++i] ?? '');
        else if (a === '-u') i++;
        else if (a === '--reverse') reverse = true;
        else if (a === '--test') test = true;
        else if (a === '--exit-on-error') exitOnError = true;
        else if (a.startsWith('--'))
          return { ...usage('run-parts'), stderr: `run-parts: unrecognized option '${a}'\n${banner}${usages['run-parts']}` };
        else dirs.push(a);
      }
      if (dirs.length !== 1) return usage('run-parts');
      const dir = posix.resolve(ctx.cwd, dirs[0]!);
      // busybox says so and still exits 0 for a directory that is not there.
      if ((await host.fs.entry(dir))?.type !== 'directory') return ok('', `run-parts: ${dirs[0]}: No such file or directory\n`);
      const names = (await host.fs.list(dir)).sort();
      if (reverse) names.reverse();
      let stdout = '';
      let stderr = '';
      let code = 0;
      for (const name of names) {
        const path = posix.join(dirs[0]!.replace(/\/$/, ''), name);
        const entry = await host.fs.entry(posix.join(dir, name));
        if (entry?.type !== 'file' || (entry.mode & 0o111) === 0) continue;
        if (test) {
          stdout += `${path}\n`;
          continue;
        }
        const run = await ctx.exec!([path, ...extra].map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: '' });
        stdout += run.stdout;
        stderr += run.stderr;
        if (run.exitCode !== 0) {
          stderr += `run-parts: ${path}: exit status ${run.exitCode}\n`;
          code = 1;
          if (exitOnError) break;
        }
      }
      return { stdout, stderr, exitCode: code };
    },
  };
  return [nologin, factor, crc, uuencode, uudecode, fallocate, shred, nuke, dnsdomainname, last, ts, runParts];
}
