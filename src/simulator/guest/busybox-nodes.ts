import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { banner } from './busybox-getopt.js';
import { newEntryMode } from './guest-fs.js';
import { fifoBits } from './guest-pipes.js';
import { umaskOf, type ProgramHost } from './program-host.js';

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

const mkfifoUsage = `${banner}Usage: mkfifo [-m MODE] NAME\n\nCreate named pipe\n\n\t-m MODE\tMode (default a=rw)\n`;
const mknodUsage =
  `${banner}Usage: mknod [-m MODE] NAME TYPE [MAJOR MINOR]\n\nCreate a special file (block, character, or pipe)\n\n` +
  '\t-m MODE\tCreation mode (default a=rw)\nTYPE:\n\tb\tBlock device\n\tc or u\tCharacter device\n\tp\tNamed pipe (MAJOR MINOR must be omitted)\n';
const crontabUsage =
  `${banner}Usage: crontab [-c DIR] [-u USER] [-ler]|[FILE]\n\n\t-c\tCrontab directory\n\t-u\tUser\n\t-l\tList crontab\n` +
  "\t-e\tEdit crontab\n\t-r\tDelete crontab\n\tFILE\tReplace crontab by FILE ('-': stdin)\n";

/** The mode a node is made with: `-m` (octal) as given, else a=rw less the umask. */
const nodeMode = (given: string | undefined, umask: number): number | undefined =>
  given === undefined ? newEntryMode(0o666, umask) : /^[0-7]{1,4}$/.test(given) ? parseInt(given, 8) : undefined;

/**
 * A named pipe as the guest keeps it: an empty file whose mode has the pipe's type bits
 * (S_IFIFO, {@link fifoBits}), made where busybox would make one.
 */
async function makeFifo(host: ProgramHost, program: string, cwd: string, name: string, mode: number): Promise<ExecResult> {
  const path = posix.resolve(cwd, name);
  if (await host.fs.entry(path)) return fail(`${program}: ${name}: File exists\n`);
  const parent = await host.fs.entry(posix.dirname(path));
  if (parent?.type !== 'directory') return fail(`${program}: ${name}: No such file or directory\n`);
  await host.fs.write(path, new Uint8Array(), { uid: host.uid, gid: host.gid, mode: fifoBits | mode });
  return ok();
}

/**
 * busybox's `mkfifo`, `mknod` and `crontab`. A device node is refused as the beds' unprivileged
 * containers refuse it (`Operation not permitted`); a pipe is an empty file (see {@link makeFifo}).
 * `crontab` keeps each user's table in `/var/spool/cron/crontabs/USER` (mode 0600) and names the
 * user in `cron.update`, as busybox does for crond; `-e` (an editor on a terminal) is not served.
 */
export function busyboxNodes(host: ProgramHost): Command[] {
  const mkfifo: Command = {
    name: 'mkfifo',
    async execute(args, ctx) {
      let given: string | undefined;
      const names: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (args[i] === '-m') given = args[++i];
        else names.push(args[i]!);
      }
      const mode = nodeMode(given, umaskOf(host));
      if (names.length === 0) return fail(mkfifoUsage);
      if (mode === undefined) return fail(`mkfifo: invalid mode '${given}'\n`);
      let result = ok();
      for (const name of names) {
        const one = await makeFifo(host, 'mkfifo', ctx.cwd, name, mode);
        if (one.exitCode) result = { ...one, stderr: result.stderr + one.stderr };
      }
      return result;
    },
  };
  const mknod: Command = {
    name: 'mknod',
    async execute(args, ctx) {
      let given: string | undefined;
      const rest: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (args[i] === '-m') given = args[++i];
        else rest.push(args[i]!);
      }
      const [name, type, major, minor] = rest;
      const mode = nodeMode(given, umaskOf(host));
      if (name === undefined || type === undefined) return fail(mknodUsage);
      if (mode === undefined) return fail(`mknod: invalid mode '${given}'\n`);
      if (type === 'p' && rest.length === 2) return makeFifo(host, 'mknod', ctx.cwd, name, mode);
      if (!['b', 'c', 'u'].includes(type) || major === undefined || minor === undefined || rest.length !== 4) return fail(mknodUsage);
      // A container's root may not make devices (no CAP_MKNOD in the beds' unprivileged containers).
      return fail(`mknod: ${name}: Operation not permitted\n`);
    },
  };
  const crontab: Command = {
    name: 'crontab',
    async execute(args, ctx) {
      let dir = '/var/spool/cron/crontabs';
      let user: string | undefined;
      let action: 'l' | 'r' | 'e' | undefined;
      let file: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-c') dir = args[++i] ?? dir;
        else if (a === '-u') user = args[++i];
        else if (a === '-l' || a === '-r' || a === '-e') action = a[1] as 'l' | 'r' | 'e';
        else if (a === '-' || !a.startsWith('-')) file = a;
        else return fail(crontabUsage);
      }
      if (action === undefined && file === undefined) return fail(crontabUsage);
      const passwd = (await ctx.fs.readFile('/etc/passwd').catch(() => ''))
        .split('\n')
        .map((l) => l.split(':'))
        .filter((f) => f.length > 2);
      const name = user ?? passwd.find((f) => f[2] === String(host.uid))?.[0] ?? String(host.uid);
      if (user !== undefined && !passwd.some((f) => f[0] === user)) return fail(`crontab: unknown user ${user}\n`);
      // The table to install is read before busybox changes to the crontab directory.
      let table: Uint8Array | undefined;
      if (action === undefined && file !== undefined) {
        if (file === '-') table = Buffer.from(String(ctx.stdin), 'latin1');
        else {
          const path = posix.resolve(ctx.cwd, file);
          if ((await host.fs.entry(path))?.type !== 'file') return fail(`crontab: can't open '${file}': No such file or directory\n`);
          table = await host.fs.read(path);
        }
      }
      const at = posix.resolve(ctx.cwd, dir);
      if ((await host.fs.entry(at))?.type !== 'directory') return fail(`crontab: can't change directory to '${dir}': No such file or directory\n`);
      const path = posix.join(at, name);
      const own = { uid: host.uid, gid: host.gid, mode: 0o600 };
      if (action === 'l') {
        if ((await host.fs.entry(path))?.type !== 'file') return fail(`crontab: can't open '${name}': No such file or directory\n`);
        return ok((await host.fs.read(path)).toString('utf8'));
      }
      if (action === 'e') return fail('crontab: -e needs a terminal, which the simulator does not have\n');
      if (action === 'r') {
        if (await host.fs.entry(path)) await host.fs.remove(path);
      } else {
        if (await host.fs.entry(path)) await host.fs.remove(path);
        await host.fs.write(path, table!, own);
      }
      // busybox tells crond whose table changed by appending the name to cron.update.
      await host.fs.write(posix.join(at, 'cron.update'), Buffer.from(`${name}\n`), { ...own, append: true });
      return ok();
    },
  };
  return [mkfifo, mknod, crontab];
}
