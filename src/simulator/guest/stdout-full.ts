import type { Command } from 'just-bash';

/** How a busybox program fails when what it writes to its stdout is refused (ENOSPC: `> /dev/full`). */
type Failure =
  /** `PROG: write error: …` and status 1: the programs that write with write(2) and check it (libbb's full_write, xwrite). */
  | 'write'
  /** `PROG: standard output: …`, the status unchanged: those whose stdio buffer fails at fflush_stdout_and_exit. */
  | 'stdout'
  /** `PROG: output error: …`, status 1: bc and dc. */
  | 'output'
  /** No message, status 1: the shell's builtins that check their writes without a word (printf, pwd …). */
  | 1
  /** No message, status 255: those that die of the failed flush quietly. */
  | 255;

/**
 * What each program does with a refused write to its stdout, as recorded on the beds (busybox 1.35,
 * `PROG > /dev/full`); the others (ls, sed, awk, grep, find, stat, od, md5sum, date …) lose their
 * output without a word and keep their status, as stdio's unchecked writes do.
 */
const failures: Record<string, Failure> = {
  cat: 'write',
  tail: 'write',
  tr: 'write',
  tac: 'write',
  wc: 'stdout',
  head: 'stdout',
  sort: 'stdout',
  uniq: 'stdout',
  cut: 'stdout',
  base64: 'stdout',
  env: 'stdout',
  id: 'stdout',
  uname: 'stdout',
  expr: 'stdout',
  rev: 'stdout',
  nl: 'stdout',
  fold: 'stdout',
  du: 'stdout',
  realpath: 'stdout',
  paste: 'stdout',
  strings: 'stdout',
  cal: 'stdout',
  expand: 'stdout',
  unexpand: 'stdout',
  shuf: 'stdout',
  tty: 'stdout',
  bc: 'output',
  dc: 'output',
  printf: 1,
  pwd: 1,
  basename: 1,
  set: 1,
  export: 1,
  type: 1,
  command: 1,
  umask: 1,
  ulimit: 1,
  times: 1,
  kill: 1,
  seq: 255,
  dirname: 255,
  whoami: 255,
};

/**
 * The shell's builtins that are busybox applets too, as the applet fails when a program runs it
 * (`env printf`, `xargs echo`, `find -exec echo`, `timeout 1 pwd`; recorded on the beds): `echo`
 * says its own `echo: write error`, `printf` and `kill -l` lose their output without a word and keep
 * their status, `pwd` ends 255. The others run as the table above says.
 */
const applets: Record<string, Failure | 'quiet'> = { echo: 'write', printf: 'quiet', kill: 'quiet', pwd: 255 };

const enospc = 'No space left on device';

/**
 * `__reflex_full PROGRAM STATUS [OWN [APPLET]]`, which the patched shell asks when a command's stdout is a
 * device that refuses writes (`/dev/full`, patches/README.md 110) and the command wrote to it: the
 * message and status the program ends with ({@link failures}). The shell's `echo`, and a compound
 * command (`bash`), say the shell's `sh: write error` (busybox's applet name, whatever the script's); a program that words its own messages (OWN) says
 * `PROG: write error`; one a program ran (APPLET: `xargs echo`) is busybox's applet of that name.
 */
export function fullStdoutCommand(): Command {
  return {
    name: '__reflex_full',
    async execute([program = 'bash', status = '0', own = '', applet = '']) {
      const code = Number(status);
      const asApplet = applet !== '' && Object.hasOwn(applets, program) ? applets[program] : undefined;
      if (asApplet === 'quiet') return { stdout: '', stderr: '', exitCode: code };
      // busybox words it with its applet's name (`sh`), not the script's or $0 as the shell's other messages.
      if (!own && !asApplet && (program === 'echo' || program === 'bash')) return { stdout: '', stderr: `sh: write error: ${enospc}\n`, exitCode: 1 };
      const failure = asApplet ?? failures[program] ?? (own ? 'write' : undefined);
      if (failure === 'write') return { stdout: '', stderr: `${program}: write error: ${enospc}\n`, exitCode: 1 };
      if (failure === 'stdout') return { stdout: '', stderr: `${program}: standard output: ${enospc}\n`, exitCode: code };
      if (failure === 'output') return { stdout: '', stderr: `${program}: output error: ${enospc}\n`, exitCode: 1 };
      return { stdout: '', stderr: '', exitCode: failure ?? code };
    },
  };
}
