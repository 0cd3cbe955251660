import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem, uptime } from 'node:os';
import { posix } from 'node:path';
import type { GuestFs } from './guest-fs.js';
import { charBits } from './guest-devices.js';
import { signalNumbers } from './guest-commands.js';

/** The instance's pid 1 as `ps` and `/proc/1` show it. */
export interface GuestInit {
  /** Its name (`comm`): the program's, or a script's own name when an interpreter runs it. */
  comm: string;
  /** Its command line (`/proc/1/cmdline`): `/bin/sh /sbin/testinit` for a script. */
  argv: string[];
  /**
   * The signals that end it: a script's traps whose action exits (the test beds' `trap 'exit 0' PWR
   * TERM`). Any other signal is ignored, as pid 1 of a container ignores a signal it has no handler for.
   */
  exitsOn: ReadonlySet<number>;
}

/** The init an instance runs: `raw.lxc`'s `lxc.init.cmd` (the test beds' `/sbin/testinit`), else `/sbin/init`. */
export async function guestInit(fs: GuestFs, rawLxc: string | undefined): Promise<GuestInit> {
  const cmd = /^lxc\.init\.cmd\s*=\s*(.+)$/m
    .exec(rawLxc ?? '')?.[1]
    ?.trim()
    .split(/\s+/) ?? ['/sbin/init'];
  const program = cmd[0]!;
  const entry = await fs.entry(program);
  const text = entry?.type === 'file' ? (await fs.read(program)).subarray(0, 4096).toString('latin1') : '';
  const interpreter = /^#!\s*(\S+)/.exec(text)?.[1];
  const exitsOn = new Set<number>();
  if (interpreter)
    for (const m of text.matchAll(/^\s*trap\s+(['"])(.*?)\1\s+([\w ]+)$/gm)) {
      if (!/\bexit\b/.test(m[2]!)) continue;
      for (const name of m[3]!.trim().split(/\s+/)) {
        const n = /^\d+$/.test(name) ? Number(name) : signalNumbers[name.toUpperCase().replace(/^SIG/, '')];
        if (n !== undefined) exitsOn.add(n);
      }
    }
  return { comm: posix.basename(program).slice(0, 15), argv: interpreter ? [interpreter, ...cmd] : cmd, exitsOn };
}

/** The host's copy of a /proc file, or what the host's os module tells when there is none (not Linux). */
function hostProc(name: string, fallback: () => string): string {
  try {
    return readFileSync(`/proc/${name}`, 'latin1');
  } catch {
    return fallback();
  }
}

/**
 * Writes the /proc files a busybox container shows for the common reads, before a command runs:
 * `cpuinfo`, `meminfo`, `uptime`, `loadavg` and `stat` are the host's (a container on the test beds
 * sees the host's, there is no lxcfs), `mounts` the container's usual set, and `/proc/1` its init.
 * just-bash lays out `/proc/self` and `/proc/version` itself.
 */
export async function writeProc(fs: GuestFs, init: GuestInit): Promise<void> {
  const files: Record<string, string> = {
    '/proc/cpuinfo': hostProc('cpuinfo', () =>
      cpus()
        .map((c, i) => `processor\t: ${i}\nmodel name\t: ${c.model}\ncpu MHz\t\t: ${c.speed}.000\n\n`)
        .join(''),
    ),
    '/proc/meminfo': hostProc('meminfo', () => `MemTotal:       ${totalmem() / 1024} kB\nMemFree:        ${freemem() / 1024} kB\n`),
    '/proc/uptime': hostProc('uptime', () => `${uptime().toFixed(2)} 0.00\n`),
    '/proc/loadavg': hostProc(
      'loadavg',
      () =>
        `${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')} 1/100 1\n`,
    ),
    '/proc/stat': hostProc('stat', () => ''),
    '/proc/mounts':
      '/dev/root / ext4 rw,relatime 0 0\nnone /dev tmpfs rw,relatime,size=492k,mode=755 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\nsysfs /sys sysfs rw,relatime 0 0\n',
    '/proc/1/comm': `${init.comm}\n`,
    '/proc/1/cmdline': `${init.argv.join('\0')}\0`,
    '/proc/1/status': `Name:\t${init.comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t1\nPid:\t1\nPPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n`,
  };
  if (!(await fs.entry('/proc/1'))) await fs.memory.mkdir('/proc/1', { recursive: true });
  // The mount table outlives the command: what `mount` adds stays listed until `umount` takes it off.
  if (await fs.entry('/proc/mounts')) delete files['/proc/mounts'];
  for (const [path, text] of Object.entries(files)) await fs.write(path, Buffer.from(text, 'latin1'), { uid: 0, gid: 0, mode: 0o444 });
}

/**
 * Writes `/proc/self` (or `dir`) as the process reading it sees it: busybox's `cat /proc/self/comm`
 * reads `cat`, its cmdline its own arguments, its status its name and pid (just-bash lays out a
 * fixed `bash` there). The guest writes it for each program before it runs, and for the shell between.
 */
export async function writeSelf(
  fs: GuestFs,
  pid: number,
  comm: string,
  argv: readonly string[],
  uid: number,
  gid: number,
  dir = '/proc/self',
): Promise<void> {
  const name = comm.slice(0, 15);
  const files: Record<string, string> = {
    comm: `${name}\n`,
    cmdline: `${argv.join('\0')}\0`,
    status: `Name:\t${name}\nUmask:\t0022\nState:\tR (running)\nTgid:\t${pid}\nPid:\t${pid}\nPPid:\t0\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nGid:\t${gid}\t${gid}\t${gid}\t${gid}\n`,
  };
  for (const [file, text] of Object.entries(files)) await fs.write(`${dir}/${file}`, Buffer.from(text, 'utf8'), { uid, gid, mode: 0o444 });
}

/** How much a read of /dev/zero or /dev/urandom gives: a reader here takes its input whole, so the endless device is bounded. */
const deviceBytes = 65_536;

/**
 * `/dev/zero`, `/dev/full`, `/dev/urandom` and `/dev/random` as devices each read of which gives 64 KiB (zeros, or
 * fresh random bytes: each program reads its own), so `head -c 16 /dev/urandom | base64` and
 * `tr -dc a-z < /dev/urandom | head -c 8` work (just-bash has an empty `/dev/zero` and no
 * `/dev/urandom`). Set again before each program; made only when read.
 */
export function writeDevices(fs: GuestFs): void {
  const mode = charBits | 0o666;
  fs.memory.writeFileLazy('/dev/zero', () => new Uint8Array(deviceBytes), { mode });
  fs.memory.writeFileLazy('/dev/full', () => new Uint8Array(deviceBytes), { mode });
  fs.memory.writeFileLazy('/dev/urandom', () => new Uint8Array(randomBytes(deviceBytes)), { mode });
  fs.memory.writeFileLazy('/dev/random', () => new Uint8Array(randomBytes(deviceBytes)), { mode });
}
