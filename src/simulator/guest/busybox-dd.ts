import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { bytesOutput } from './bytes-output.js';
import { suffixed } from './busybox-getopt.js';
import { newEntryMode } from './guest-fs.js';
import { errnoOf, errnos } from './fs-error.js';
import { openPath } from './guest-open.js';
import { stdinBytes, umaskOf, type ProgramHost } from './program-host.js';

const usage =
  'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n' +
  'Usage: dd [if=FILE] [of=FILE] [ibs=N obs=N/bs=N] [count=N] [skip=N] [seek=N]\n' +
  '\t[conv=notrunc|noerror|sync|fsync]\n' +
  '\t[iflag=skip_bytes|count_bytes|fullblock|direct] [oflag=seek_bytes|append|direct]\n\n' +
  'Copy a file with converting and formatting\n\n' +
  '\tif=FILE\t\tRead from FILE instead of stdin\n' +
  '\tof=FILE\t\tWrite to FILE instead of stdout\n' +
  '\tbs=N\t\tRead and write N bytes at a time\n' +
  '\tibs=N\t\tRead N bytes at a time\n' +
  '\tobs=N\t\tWrite N bytes at a time\n' +
  '\tcount=N\t\tCopy only N input blocks\n' +
  '\tskip=N\t\tSkip N input blocks\n' +
  '\tseek=N\t\tSkip N output blocks\n' +
  "\tconv=notrunc\tDon't truncate output file\n" +
  '\tconv=noerror\tContinue after read errors\n' +
  '\tconv=sync\tPad blocks with zeros\n' +
  '\tconv=fsync\tPhysically write data out before finishing\n' +
  '\tconv=swab\tSwap every pair of bytes\n' +
  '\tiflag=skip_bytes\tskip=N is in bytes\n' +
  '\tiflag=count_bytes\tcount=N is in bytes\n' +
  '\toflag=seek_bytes\tseek=N is in bytes\n' +
  '\tiflag=direct\tO_DIRECT input\n' +
  '\toflag=direct\tO_DIRECT output\n' +
  '\tiflag=fullblock\tRead full blocks\n' +
  '\toflag=append\tOpen output in append mode\n' +
  '\tstatus=noxfer\tSuppress rate output\n' +
  '\tstatus=none\tSuppress all output\n\n' +
  'N may be suffixed by c (1), w (2), b (512), kB (1000), k (1024), MB, M, GB, G\n';

/** libbb's cwbkMG_suffixes. */
const units = {
  c: 1,
  w: 2,
  b: 512,
  kB: 1000,
  kD: 1000,
  k: 1024,
  KB: 1000,
  KD: 1000,
  K: 1024,
  MB: 1e6,
  MD: 1e6,
  M: 1 << 20,
  GB: 1e9,
  GD: 1e9,
  G: 1 << 30,
};
const keywords = new Set(['bs', 'count', 'seek', 'skip', 'if', 'of', 'status', 'ibs', 'obs', 'conv', 'iflag', 'oflag']);
const words: Readonly<Record<string, readonly string[]>> = {
  conv: ['notrunc', 'sync', 'noerror', 'fsync', 'swab'],
  iflag: ['skip_bytes', 'count_bytes', 'fullblock', 'direct'],
  oflag: ['seek_bytes', 'append', 'direct'],
  status: ['none', 'noxfer'],
};
const sizeMax = 2n ** 63n - 1n;

/** A message that ends dd before it copies (status 1, no record counts). */
class Die {
  constructor(readonly message: string) {}
}

/** xatoul_range_sfx / xatoull_sfx: a number with cwbkMG's suffixes, in [min, max]. */
function number(text: string, min = 0n, max = 2n ** 64n - 1n): number {
  const n = suffixed(text, units);
  if (n === undefined) throw new Die(`invalid number '${text}'`);
  if (BigInt(n) < min || BigInt(n) > max) throw new Die(`number ${text} is not in ${min}..${max} range`);
  return n;
}

interface Operands {
  ibs: number;
  obs: number;
  count?: number;
  seek: number;
  skip: number;
  infile?: string;
  outfile?: string;
  flags: Set<string>;
}

function parse(args: readonly string[]): Operands | 'usage' {
  const o: Operands = { ibs: 512, obs: 512, seek: 0, skip: 0, flags: new Set() };
  for (const arg of args) {
    if (arg === '--') continue;
    const eq = arg.indexOf('=');
    const key = arg.slice(0, eq);
    if (eq < 0 || !keywords.has(key)) return 'usage';
    const val = arg.slice(eq + 1);
    if (key === 'bs' || key === 'ibs' || key === 'obs') {
      const n = number(val, 1n, sizeMax);
      if (key !== 'obs') o.ibs = n;
      if (key !== 'ibs') o.obs = n;
    } else if (key === 'count') o.count = number(val);
    else if (key === 'seek') o.seek = number(val);
    else if (key === 'skip') o.skip = number(val);
    else if (key === 'if') o.infile = val;
    else if (key === 'of') o.outfile = val;
    else if (key === 'status') {
      if (!words.status!.includes(val)) throw new Die(`invalid argument '${val}' to 'status'`);
      o.flags.add(`status=${val}`);
    } else
      for (const word of val.split(',')) {
        if (!words[key]!.includes(word)) throw new Die(`invalid argument '${word}' to '${key}'`);
        o.flags.add(`${key}=${word}`);
      }
  }
  return o;
}

/** Where dd reads from: bytes, or an endless device read `n` bytes at a time. */
type Input = Buffer | ((n: number) => Buffer);

/**
 * busybox 1.35's dd (coreutils/dd.c): its operands and their refusals, the input read `ibs` at a
 * time after `skip`, `count` blocks (or bytes), `conv=sync` padding and `swab`, writes of `obs`
 * bytes, the records in and out counted full and partial; the output opened without O_TRUNC when
 * `seek` is given or `conv=notrunc`, and then cut at `seek` (a hole past the end), `oflag=append`
 * writing at its end. A regular file's input is read in whole blocks and stdin as the exec gave it,
 * so a block is short only at the end (a pipe's reads on the beds can be shorter).
 */
export function ddCommand(host: ProgramHost): Command {
  return {
    name: 'dd',
    async execute(args, ctx): Promise<ExecResult> {
      try {
        const o = parse(args);
        if (o === 'usage') return { stdout: '', stderr: usage, exitCode: 1 };
        let input: Input;
        const source = o.infile;
        if (source === '/dev/zero') input = (n) => Buffer.alloc(n);
        else if (source === '/dev/urandom' || source === '/dev/random') input = (n) => randomBytes(n);
        else if (source !== undefined) {
          const opened = await openPath(host, ctx.cwd, source, 'read');
          if ('error' in opened) throw new Die(`can't open '${source}': ${opened.error}`);
          if ('directory' in opened) throw new Die(`${source}: Is a directory`);
          input = Buffer.from(opened.data, 'latin1');
        } else input = stdinBytes(ctx);
        if (typeof input === 'function' && o.count === undefined)
          throw new Die('an endless input (/dev/zero, /dev/urandom) needs count= in the simulator');

        const outPath = o.outfile === undefined ? undefined : posix.resolve(ctx.cwd, o.outfile);
        const seekAt = o.seek * (o.flags.has('oflag=seek_bytes') ? 1 : o.obs);
        if (o.outfile !== undefined) {
          const opened = await openPath(host, ctx.cwd, o.outfile, 'write');
          if ('error' in opened) throw new Die(`can't open '${o.outfile}': ${opened.error}`);
        } else if (o.seek > 0) throw new Die('standard output: Illegal seek');

        // The copy: reads of ibs (or what count_bytes leaves), written out obs at a time.
        let at = typeof input === 'function' ? 0 : Math.min(input.length, o.skip * (o.flags.has('iflag=skip_bytes') ? 1 : o.ibs));
        const read = (n: number): Buffer => {
          if (typeof input === 'function') return input(n);
          const chunk = input.subarray(at, at + n);
          at += chunk.length;
          return chunk;
        };
        const counts = { inFull: 0, inPart: 0, outFull: 0, outPart: 0 };
        const out: Buffer[] = [];
        const write = (chunk: Buffer): void => {
          out.push(chunk);
          if (chunk.length === o.obs) counts.outFull++;
          else counts.outPart++;
        };
        let left = o.count;
        let pending = Buffer.alloc(0);
        let lastOdd = false;
        /** The length of the first block read: what dd has read when its first write fails. */
        let firstRead: number | undefined;
        for (;;) {
          let n = o.ibs;
          if (left !== undefined) {
            if (left === 0) break;
            if (o.flags.has('iflag=count_bytes') && left < o.ibs) n = left;
          }
          let chunk = Buffer.from(read(n));
          if (chunk.length === 0) break;
          firstRead ??= chunk.length;
          if (o.flags.has('conv=swab')) {
            if (lastOdd) throw new Die(`can't swab ${o.ibs} byte buffer`);
            lastOdd = chunk.length % 2 === 1;
            for (let i = 0; i + 1 < chunk.length; i += 2) [chunk[i], chunk[i + 1]] = [chunk[i + 1]!, chunk[i]!];
          }
          if (left !== undefined) left -= o.flags.has('iflag=count_bytes') ? chunk.length : 1;
          if (chunk.length === o.ibs) counts.inFull++;
          else {
            counts.inPart++;
            if (o.flags.has('conv=sync')) chunk = Buffer.concat([chunk, Buffer.alloc(o.ibs - chunk.length)]);
          }
          if (o.ibs === o.obs) write(chunk);
          else {
            pending = Buffer.concat([pending, chunk]);
            for (; pending.length >= o.obs; pending = pending.subarray(o.obs)) write(pending.subarray(0, o.obs));
          }
        }
        if (pending.length > 0) write(pending);
        const data = Buffer.concat(out);

        const status = o.flags.has('status=none')
          ? ''
          : `${counts.inFull}+${counts.inPart} records in\n${counts.outFull}+${counts.outPart} records out\n`;
        if (outPath === undefined) return bytesOutput(data, status);
        const spec = { uid: host.uid, gid: host.gid, mode: newEntryMode(0o666, umaskOf(host)) };
        const notrunc = o.flags.has('conv=notrunc');
        // open(O_CREAT, and O_TRUNC without seek= or notrunc), then ftruncate at seek's offset without notrunc:
        // a device refuses it (EINVAL), which dd.c lets pass for what is not a file or a directory.
        if (!notrunc)
          try {
            await host.fs.resize(outPath, seekAt, spec);
          } catch (e) {
            if (errnoOf(e) !== 'EINVAL') throw e;
          }
        const opened = await host.fs.memory.stat(outPath).catch(() => undefined);
        if (!opened) await host.fs.resize(outPath, 0, spec);
        const end = opened?.size ?? 0;
        try {
          if (data.length > 0) await host.fs.writeAt(outPath, data, o.flags.has('oflag=append') ? end : seekAt, spec);
        } catch (e) {
          // A write that fails (/dev/full; past the guest's 1 GiB): dd stops at its first block, none of it out.
          const code = errnoOf(e);
          if (code !== 'ENOSPC') throw e;
          const first = firstRead === o.ibs ? '1+0' : '0+1';
          const counted = o.flags.has('status=none') ? '' : `${first} records in\n0+0 records out\n`;
          return { stdout: '', stderr: `dd: error writing '${o.outfile}': ${errnos[code]}\n${counted}`, exitCode: 1 };
        }
        return { stdout: '', stderr: status, exitCode: 0 };
      } catch (e) {
        if (e instanceof Die) return { stdout: '', stderr: `dd: ${e.message}\n`, exitCode: 1 };
        throw e;
      }
    },
  };
}
