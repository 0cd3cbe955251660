import { randomBytes } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { newEntryMode, type GuestFs } from './guest-fs.js';
import { umaskOf } from './program-host.js';
import type { GuestProcEntry } from './busybox-system.js';
import type { GuestInit } from './guest-proc.js';
import { bytesOutput } from './bytes-output.js';
import { exprCommand } from './busybox-expr.js';
import { ddCommand } from './busybox-dd.js';
import { printfCommand } from './busybox-printf.js';
import { trCommand } from './busybox-tr.js';
import { suffixed } from './busybox-getopt.js';

/** What the busybox programs below need to know about the instance and the command running them. */
export interface BusyboxHost {
  fs: GuestFs;
  uid: number;
  gid: number;
  /** The instance's init process (pid 1). */
  init: GuestInit;
  /** The pid of the command's shell (`$$`). */
  pid: number;
  /** The process's umask as its shell has it now (default 022). */
  umask?: () => number;
  /** The background jobs running in the instance (`cmd &`), which `ps` lists. */
  jobs?: () => GuestProcEntry[];
}

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });
/** A line of the guest's passwd or group file, by name or number. */
async function lookUp(ctx: CommandContext, file: '/etc/passwd' | '/etc/group', key: string): Promise<string[] | undefined> {
  const text = await ctx.fs.readFile(file).catch(() => '');
  const lines = text.split('\n').map((l) => l.split(':'));
  return lines.find((f) => f[0] === key) ?? (/^\d+$/.test(key) ? ['', '', key, key] : undefined);
}

/**
 * The busybox programs scripts and tools reach for that just-bash does not have (`yes`, `mktemp`,
 * `chown`, `dd`, `df`, `ps`, `ash`), `printf` writing the byte an escape names (just-bash
 * writes `\xff` as the text `ÿ`, two bytes in UTF-8), and `expr` and `tr` on bytes, as busybox in
 * the C locale. Their output and messages are busybox's on the
 * test beds (LXD 5.0.2, Incus 6.0.4; `test/conformance/busybox-programs.test.ts`).
 */
export function busyboxCommands(host: BusyboxHost): Command[] {
  const yes: Command = {
    name: 'yes',
    // No pipe runs side by side here: the reader (`yes | head -3`) gets a bounded stream (64 KiB lines).
    execute: async (args) => ok(`${args.length ? args.join(' ') : 'y'}\n`.repeat(65_536)),
  };
  const mktemp: Command = {
    name: 'mktemp',
    async execute(args, ctx) {
      let dir = false;
      let dry = false;
      let base: string | undefined;
      let template: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-d') dir = true;
        else if (a === '-u') dry = true;
        else if (a === '-q') continue;
        else if (a === '-t') base ??= '/tmp';
        else if (a === '-p') base = args[++i];
        else template = a;
      }
      template ??= 'tmp.XXXXXX';
      if (!template.endsWith('XXXXXX')) return fail('mktemp: (null): Invalid argument\n');
      if (template === 'tmp.XXXXXX' || base !== undefined) template = posix.join(base ?? '/tmp', template);
      const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      const path = posix.resolve(
        ctx.cwd,
        template.replace(/X+$/, (xs) => [...randomBytes(xs.length)].map((b) => letters[b % letters.length]).join('')),
      );
      if (!dry) {
        const parent = await host.fs.entry(posix.dirname(path));
        if (parent?.type !== 'directory') return fail(`mktemp: (null): No such file or directory\n`);
        if (dir) await host.fs.mkdir(path, { uid: host.uid, gid: host.gid, mode: 0o700 });
        else await host.fs.write(path, Buffer.alloc(0), { uid: host.uid, gid: host.gid, mode: 0o600 });
      }
      return ok(`${path}\n`);
    },
  };
  const chown: Command = {
    name: 'chown',
    async execute(args, ctx) {
      const flags = args.filter((a) => /^-[RhfLHPv]+$/.test(a));
      const [spec, ...files] = args.filter((a) => !flags.includes(a));
      if (spec === undefined || files.length === 0)
        return fail('BusyBox v1.36.1 multi-call binary.\n\nUsage: chown [-RhLHPcvf]... USER[:[GRP]] FILE...\n');
      const [user, group] = spec.split(/[:.]/, 2) as [string, string | undefined];
      const pw = user === '' ? undefined : await lookUp(ctx, '/etc/passwd', user);
      if (user !== '' && !pw) return fail(`chown: unknown user ${user}\n`);
      const gr = group ? await lookUp(ctx, '/etc/group', group) : undefined;
      if (group && !gr) return fail(`chown: unknown group ${group}\n`);
      const recursive = flags.some((f) => f.includes('R'));
      let stderr = '';
      const apply = async (path: string, shown: string): Promise<void> => {
        const entry = await host.fs.entry(path);
        if (!entry) return void (stderr += `chown: ${shown}: No such file or directory\n`);
        if (host.uid !== 0) return void (stderr += `chown: ${shown}: Operation not permitted\n`);
        const uid = pw ? Number(pw[2]) : entry.uid;
        // USER: takes the user's login group; USER alone keeps the group.
        const gid = gr ? Number(gr[2]) : group === '' && pw ? Number(pw[3]) : entry.gid;
        await host.fs.setMeta(path, { uid, gid, mode: entry.mode });
        if (recursive && entry.type === 'directory')
          for (const name of await host.fs.list(path)) await apply(posix.join(path, name), posix.join(shown, name));
      };
      for (const f of files) await apply(posix.resolve(ctx.cwd, f), f);
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const df: Command = {
    name: 'df',
    execute: async (args) => {
      // The instance's root is a directory of the host's disk: the daemons' containers show its figures.
      const human = args.includes('-h');
      let blocks = 0;
      let free = 0;
      let avail = 0;
      try {
        const st = statfsSync('/');
        [blocks, free, avail] = [st.blocks, st.bfree, st.bavail].map((n) => (n * st.bsize) / 1024) as [number, number, number];
      } catch {
        // No figures for this host: zeros.
      }
      const used = blocks - free;
      const pct = used + avail > 0 ? `${Math.ceil((used * 100) / (used + avail))}%` : '0%';
      const k = (n: number): string => (human ? humanSize(n) : String(Math.round(n)));
      const head = human
        ? 'Filesystem                Size      Used Available Use% Mounted on'
        : 'Filesystem           1K-blocks      Used Available Use% Mounted on';
      const row = `${'/dev/root'.padEnd(20)}${k(blocks).padStart(10)}${k(used).padStart(10)}${k(avail).padStart(10)}${pct.padStart(5)} /`;
      return ok(`${head}\n${row}\n`);
    },
  };
  const ps: Command = {
    name: 'ps',
    async execute(args) {
      const at = args.indexOf('-o');
      const fields = at >= 0 ? (args[at + 1] ?? '').split(',') : ['pid', 'user', 'args'];
      const user = host.uid === 0 ? 'root' : String(host.uid);
      const procs = [
        { pid: 1, ppid: 0, user: 'root', comm: host.init.comm, args: host.init.argv.join(' ') },
        ...(host.jobs?.() ?? []).map((j) => ({ pid: j.pid, ppid: j.ppid, user, comm: j.comm, args: j.argv.join(' ') })),
        { pid: host.pid, ppid: 0, user, comm: 'ps', args: ['ps', ...args].join(' ') },
      ];
      const columns: Record<string, { head: string; width: number; value: (p: (typeof procs)[number]) => string }> = {
        pid: { head: 'PID', width: 5, value: (p) => String(p.pid).padStart(5) },
        ppid: { head: 'PPID', width: 5, value: (p) => String(p.ppid).padStart(5) },
        user: { head: 'USER', width: 8, value: (p) => p.user.padEnd(8) },
        comm: { head: 'COMMAND', width: 16, value: (p) => p.comm.padEnd(16) },
        // busybox shows the name in braces where it is not the program's (a script run by its interpreter).
        args: { head: 'COMMAND', width: 0, value: (p) => (posix.basename(p.args.split(' ')[0]!) === p.comm ? p.args : `{${p.comm}} ${p.args}`) },
      };
      const unknown = fields.find((f) => !columns[f]);
      if (unknown !== undefined) return fail(`ps: bad -o argument '${unknown}'\n`);
      const line = (cells: string[]): string => `${cells.join(' ').trimEnd()}\n`;
      const header = line(fields.map((f) => columns[f]!.head.padEnd(columns[f]!.width)));
      return ok(header + procs.map((p) => line(fields.map((f) => columns[f]!.value(p)))).join(''));
    },
  };
  return [printfCommand(), yes, mktemp, chown, ddCommand(host), df, ps, exprCommand(), trCommand()];
}

/** busybox df -h's sizes: one decimal below 10, units K M G T, from KiB. */
function humanSize(kib: number): string {
  const units = ['K', 'M', 'G', 'T', 'P'];
  let n = kib;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)}${units[u]}`;
}
