import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { getopt, isResult } from './busybox-getopt.js';
import { loginArgv0 } from './nested-shell.js';
import { shellQuote } from './program-run.js';

const usageText = `Usage: su [-lmp] [-s SH] [-] [USER [FILE ARGS | -c 'CMD' [ARG0 ARGS]]]

Run shell under USER (by default, root)

\t-,-l\tClear environment, go to home dir, run shell as login shell
\t-p,-m\tDo not set new $HOME, $SHELL, $USER, $LOGNAME
\t-c CMD\tCommand to pass to 'sh -c'
\t-s SH\tShell to use instead of user's default
`;

/** libbb's `bb_default_root_path`: the PATH a login shell of root gets. */
const rootPath = '/sbin:/usr/sbin:/bin:/usr/bin';

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/**
 * busybox's `su` as root (the only user the beds' image has): `su [-lmp] [-s SH] [-] [USER [FILE
 * ARGS | -c 'CMD' [ARG0 ARGS]]]`. As its `setup_environment` and `run_shell` do:
 * - `-` or `-l`: the environment cleared but TERM, PATH root's default, USER, LOGNAME, HOME and
 *   SHELL set, in the home directory, and the shell a login shell (`-sh`, nested-shell.ts), which
 *   reads `/etc/profile` and `~/.profile` first;
 * - without `-m`/`-p`: the environment kept, HOME and SHELL set;
 * - `-m`/`-p`: the environment as it is, the shell `$SHELL`'s when it has one;
 * - the shell is `-s`'s, else the user's in /etc/passwd; one that does not exist is said as
 *   busybox says it (`su: can't execute '/bin/x': No such file or directory`, 1).
 * On a terminal, a bare `su` starts an interactive shell there (the patched shell's `jbTty`).
 */
export function suCommand(host: { uid: number }): Command {
  return {
    name: 'su',
    async execute(args, ctx) {
      const p = getopt('su', usageText, args, 'mpl', 'cs', null);
      if (isResult(p)) return p;
      const operands = [...p.operands];
      const login = p.opts.has('l') || operands[0] === '-';
      if (operands[0] === '-') operands.shift();
      const user = operands.shift() ?? 'root';
      const command = p.opts.get('c') as string | undefined;
      const keep = p.opts.has('m') || p.opts.has('p');
      const passwd = await ctx.fs.readFile('/etc/passwd').catch(() => '');
      const entry = passwd
        .split('\n')
        .map((l) => l.split(':'))
        .find((f) => f[0] === user);
      if (!entry) return fail(`su: unknown user ${user}\n`);
      if (host.uid !== 0) return fail('su: must be suid to work properly\n');
      if (entry[2] !== '0') return fail(`su: can't switch to ${user} here\n`);

      const home = entry[5] || '/';
      const exported = ctx.exportedEnv ?? {};
      const shell = (p.opts.get('s') as string | undefined) || (keep ? exported.SHELL : undefined) || entry[6] || '/bin/sh';
      if (!(await ctx.fs.exists(posix.resolve(ctx.cwd, shell)))) return fail(`su: can't execute '${shell}': No such file or directory\n`);
      const env: Record<string, string> = login
        ? {
            ...(exported.TERM !== undefined ? { TERM: exported.TERM } : {}),
            PATH: rootPath,
            USER: user,
            LOGNAME: user,
            HOME: home,
            SHELL: shell,
          }
        : keep
          ? { ...exported }
          : { ...exported, HOME: home, SHELL: shell };
      const cwd = login ? home : ctx.cwd;
      const argv0 = `${login ? '-' : ''}${posix.basename(shell)}`;
      // The shell's argv[0]: a login shell (`-sh`) says so in its messages and reads its profiles first (nested-shell.ts).
      if (login && ['sh', 'ash'].includes(posix.basename(shell))) env[loginArgv0] = argv0;
      const options = { env, replaceEnv: true, cwd };

      const tty = (ctx as CommandContext & { jbTty?: unknown }).jbTty;
      const exec = ctx.execWithInheritedStdin;
      if (tty && exec && command === undefined && operands.length === 0) {
        return exec(shellQuote(shell), { ...options, jbTty: tty } as Parameters<typeof exec>[1]);
      }
      // The shell's argv as run_shell gives it: `-c CMD [ARG0 ARGS]`, `FILE ARGS`, or the script on
      // stdin; its $0 is ARG0, the FILE, or its argv[0] (its name, `-sh` for a login shell).
      const argv =
        command !== undefined ? [shell, '-c', command, ...operands] : operands.length === 0 ? [shell, '-c', String(ctx.stdin)] : [shell, ...operands];
      const line = argv.map(shellQuote).join(' ');
      if (tty && exec) return exec(line, { ...options, jbTty: tty } as Parameters<typeof exec>[1]);
      return ctx.exec!(line, { ...options, stdin: '' });
    },
  };
}
